//! Files as every layer writes them: durable whole-file updates and checks of the folders a
//! run is given (existing, not a file, not to be replaced, apart from each other), and files
//! opened for reading only when they are regular files.

pub mod durable;
mod folders;
mod regular;
mod resolved;

pub use folders::refuse_existing;
pub use folders::{existing_folder, existing_parent, fresh_path, output_file};
pub use regular::{open_regular, read_regular, read_regular_to_string};
pub use resolved::{resolved, within};
