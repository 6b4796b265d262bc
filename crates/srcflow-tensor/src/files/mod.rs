//! Files as every layer writes them: durable whole-file updates and checks of the folders a
//! run is given (existing, not a file, not to be replaced).

pub mod durable;
mod folders;

pub use folders::refuse_existing;
pub use folders::{existing_folder, existing_parent, fresh_path, output_file};
