//! Building the sweep graph from the stack's shapes (no data is read).

use super::{Cols, DataId, Lane, Op, Pass, Shared, SweepGraph, Task};
use crate::error::{Error, Result};
use crate::kernels::{self, legs};
use crate::tensor::{DType, Labeled, Leg, Meter, Shape};
use crate::train::StackShape;
use petgraph::stable_graph::{NodeIndex, StableDiGraph};
use std::collections::HashMap;
use std::ops::Range;

/// Bytes of a complex128 element: dry-run costs are counted in complex128 and scaled to the
/// graph's element type in one place ([`Meter::in_dtype`]).
const C128_BYTES: usize = 16;

/// Choices that shape the graph.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GraphOptions {
    /// Output bond cap χ̄.
    pub chi_out: usize,
    /// Sketch columns per env/sketch task; `None` puts all columns in one task.
    pub batch_cols: Option<usize>,
    /// Relative singular-value cutoff in `[0, 1)`: bonds drop singular values below
    /// `cutoff · σ_max` (0: keep χ̄).
    pub cutoff: f64,
    /// Sketch `⌈oversample · χ̄⌉` columns (at least 1); above χ̄, an SVD rounding sweep brings
    /// the bonds back to χ̄.
    pub oversample: f64,
    /// The element type to compute in; `None`: the layers' types promoted as NumPy would.
    pub dtype: Option<DType>,
    /// Devices to share the sweep between (at least 1).
    pub devices: usize,
    /// Fold each site's cores into S once for its sketch and projection where that saves flops
    /// (one device only); costs a value `phys` times the size of S per site.
    pub fold: bool,
}

impl GraphOptions {
    /// Options for output bond `chi_out`, everything else at its default.
    pub fn new(chi_out: usize) -> Self {
        GraphOptions {
            chi_out,
            batch_cols: None,
            cutoff: 0.0,
            oversample: 1.0,
            dtype: None,
            devices: 1,
            fold: true,
        }
    }

    /// Checks every choice; the error names the option and the value found.
    pub fn check(&self) -> Result<()> {
        if self.chi_out == 0 {
            return Err(Error::Invalid(
                "--chi-out must be at least 1, found 0".into(),
            ));
        }
        if self.batch_cols == Some(0) {
            return Err(Error::Invalid(
                "the batch size must be at least 1 column, found 0".into(),
            ));
        }
        if !(0.0..1.0).contains(&self.cutoff) {
            return Err(Error::Invalid(format!(
                "--cutoff must be in [0, 1), found {}",
                self.cutoff
            )));
        }
        if self.devices == 0 {
            return Err(Error::Invalid(
                "--devices must be at least 1, found 0".into(),
            ));
        }
        if !(self.oversample.is_finite() && self.oversample >= 1.0) {
            return Err(Error::Invalid(format!(
                "--oversample must be a finite factor of at least 1, found {}",
                self.oversample
            )));
        }
        Ok(())
    }

    /// The element type a run of `stack` computes in, or an error when a forced real type
    /// would drop the imaginary parts of a complex layer.
    pub fn dtype_for(&self, stack: &StackShape) -> Result<DType> {
        let Some(forced) = self.dtype else {
            return Ok(stack.dtype());
        };
        let complex = stack.layers.iter().find(|l| l.dtype.is_complex());
        match complex {
            Some(layer) if !forced.is_complex() => Err(Error::Invalid(format!(
                "--dtype {forced} would drop the imaginary parts of layer '{}' ({}); use {}",
                layer.name,
                layer.dtype,
                if forced.is_double() {
                    "complex128"
                } else {
                    "complex64"
                }
            ))),
            _ => Ok(forced),
        }
    }

    /// Number of sketch columns: `⌈oversample · χ̄⌉`.
    pub fn sketch(&self) -> usize {
        let columns = (self.oversample * self.chi_out as f64).ceil();
        (columns as usize).max(self.chi_out)
    }
}

impl SweepGraph {
    /// Builds the graph of one SRC sweep over `stack`.
    pub fn build(stack: &StackShape, options: &GraphOptions) -> Result<SweepGraph> {
        stack.check(None)?;
        options.check()?;
        let dtype = options.dtype_for(stack)?;
        let sketch = options.sketch();
        let batch = options.batch_cols.unwrap_or(sketch).min(sketch);
        let mut graph = SweepGraph {
            graph: StableDiGraph::new(),
            stack: stack.clone(),
            chi_out: options.chi_out,
            sketch,
            cutoff: options.cutoff,
            dtype,
            out_bonds: output_bonds(stack, sketch),
            devices: if stack.sites() == 2 {
                1
            } else {
                options.devices
            },
            planned_fetch_window: None,
            fold: options.fold,
            unfolded: Default::default(),
        };
        let folding = (0..graph.sites()).map(|site| graph.folds(site)).collect();
        let mut builder = Builder {
            folding,
            batches: (0..graph.active_devices())
                .flat_map(|device| batches(graph.device_cols(device), batch, device))
                .collect(),
            width: batch,
            device: 0,
            tasks: Vec::new(),
            shape: &graph,
        };
        if stack.sites() == 2 {
            builder.exact_path();
        } else {
            builder.left_to_right();
            builder.right_to_left();
            if builder.rounds() {
                builder.rounding();
            }
        }
        graph.graph = connect(builder.tasks);
        Ok(graph)
    }
}

/// The columns `cols` of `device` in batches of `width`.
fn batches(cols: Cols, width: usize, device: usize) -> Vec<(usize, Cols)> {
    (cols.start..cols.end)
        .step_by(width)
        .map(|start| {
            let end = (start + width).min(cols.end);
            (device, Cols { start, end })
        })
        .collect()
}

impl SweepGraph {
    /// Dry-run cost of an env or sketch task of `site` over `width` sketch columns, or of a
    /// project task over `width` output rows (`None` for other operations, which have no
    /// batch).
    pub fn batch_cost(&self, op: Op, site: usize, width: usize) -> Option<Meter> {
        let builder = Builder::dry(self);
        let cost = match op {
            Op::Env => builder.env_cost(site, width),
            Op::Sketch => builder.sketch_cost(site, width),
            Op::Project => builder.project_cost(site, width),
            _ => return None,
        };
        Some(cost.in_dtype(self.dtype))
    }

    /// True when the right-to-left pass folds the cores of `site` into S once (an
    /// [`Op::Fold`] task) for its sketch and its projection: when the graph allows it, on one
    /// device, at an inner site (1..n), where that does fewer flops than contracting the
    /// cores in both kernels.
    pub fn folds(&self, site: usize) -> bool {
        let inner = site > 0 && site < self.sites() && self.sites() > 2;
        if !self.fold || self.devices > 1 || !inner || self.unfolded.contains(&site) {
            return false;
        }
        let builder = Builder::dry(self);
        let rows = builder.basis(site).value[0];
        let unfolded = builder.unfolded_sketch_cost(site, self.sketch).flops
            + builder.unfolded_project_cost(site, rows).flops;
        let folded = builder.fold_cost(site).flops
            + builder.folded_sketch_cost(site, self.sketch).flops
            + builder.folded_project_cost(site, rows).flops;
        folded < unfolded
    }
}

/// Output bonds, right to left: the bond left of site j is min(s, phys_j · bond right of j).
pub(super) fn output_bonds(stack: &StackShape, sketch: usize) -> Vec<usize> {
    let n = stack.sites();
    let mut bonds = vec![0; n - 1];
    let mut right = 1;
    for site in (1..n).rev() {
        let (up, down) = stack.output_phys(site);
        right = sketch.min(up * down * right);
        bonds[site - 1] = right;
    }
    bonds
}

/// Adds an edge from every producer of each input (the blocks of a batched project task each
/// write a slice of their output) to its consumer.
fn connect(tasks: Vec<Task>) -> StableDiGraph<Task, DataId> {
    let mut graph = StableDiGraph::new();
    let nodes: Vec<NodeIndex> = tasks.into_iter().map(|t| graph.add_node(t)).collect();
    let mut producers: HashMap<DataId, Vec<NodeIndex>> = HashMap::new();
    for &node in &nodes {
        for &out in &graph[node].outputs {
            producers.entry(out).or_default().push(node);
        }
    }
    for &node in &nodes {
        for input in graph[node].inputs.clone() {
            for &producer in &producers[&input] {
                graph.add_edge(producer, node, input);
            }
        }
    }
    graph
}

/// Collects the tasks of one sweep with their dry-run costs.
struct Builder<'a> {
    /// The graph being built: its shapes, bonds and devices (its tasks are in `tasks`).
    shape: &'a SweepGraph,
    /// Column batches of env and sketch tasks, with the device that runs them.
    batches: Vec<(usize, Cols)>,
    /// Columns per batch.
    width: usize,
    /// The device the tasks pushed now run on.
    device: usize,
    tasks: Vec<Task>,
    /// Whether each site folds, decided once per graph (empty for dry-run costs, which ask the
    /// graph).
    folding: Vec<bool>,
}

impl<'a> Builder<'a> {
    /// A builder for dry-run costs of `shape`'s tasks, pushing none.
    fn dry(shape: &'a SweepGraph) -> Self {
        Builder {
            shape,
            batches: Vec::new(),
            width: shape.sketch,
            device: 0,
            tasks: Vec::new(),
            folding: Vec::new(),
        }
    }

    /// Whether `site` folds ([`SweepGraph::folds`]).
    fn folds(&self, site: usize) -> bool {
        match self.folding.get(site) {
            Some(&folds) => folds,
            None => self.shape.folds(site),
        }
    }

    fn layers(&self) -> usize {
        self.shape.stack.layers.len()
    }

    fn stack(&self) -> &StackShape {
        &self.shape.stack
    }

    fn sharing(&self) -> bool {
        self.shape.devices > 1
    }

    fn devices(&self) -> std::ops::Range<usize> {
        0..self.shape.active_devices()
    }

    fn cores(&self, site: usize) -> Vec<Labeled<Shape>> {
        let k = self.layers();
        self.stack()
            .site(site)
            .iter()
            .enumerate()
            .map(|(i, s)| Labeled {
                legs: legs::core(i, k),
                value: s.to_vec(),
            })
            .collect()
    }

    /// The input cores of `site` as the tasks of the current device read them: read once for
    /// the node and, when devices share the sweep, all-gathered on each.
    fn core_ids(&self, site: usize, pass: Pass) -> Vec<DataId> {
        (0..self.layers())
            .map(|layer| self.on_device(Shared::Core { layer, site, pass }))
            .collect()
    }

    /// The name under which the current device reads the shared value `of`: the value itself on
    /// a single device, else the current device's replica.
    fn on_device(&self, of: Shared) -> DataId {
        if self.sharing() {
            DataId::Replica {
                of,
                device: self.device,
            }
        } else {
            of.whole()
        }
    }

    /// S of `site` as the current device reads it (none right of the last site).
    fn proj_ids(&self, site: usize) -> Vec<DataId> {
        if site < self.stack().sites() {
            vec![self.on_device(Shared::Proj { site })]
        } else {
            vec![]
        }
    }

    /// What the sketch and the projection of `site` read besides the environment or the
    /// basis: the folded site, or the cores and S of the site to the right.
    fn site_ids(&self, site: usize) -> Vec<DataId> {
        if self.folds(site) {
            return vec![DataId::Folded { site }];
        }
        let mut ids = self.core_ids(site, Pass::RightToLeft);
        ids.extend(self.proj_ids(site + 1));
        ids
    }

    /// The fold task of `site`, where it folds: its cores into the S to its right.
    fn fold(&mut self, site: usize, step: usize) {
        if !self.folds(site) {
            return;
        }
        let mut inputs = self.core_ids(site, Pass::RightToLeft);
        inputs.extend(self.proj_ids(site + 1));
        let io = (inputs, vec![DataId::Folded { site }]);
        let cost = self.fold_cost(site);
        self.push(Op::Fold, site, None, io, cost, step);
    }

    /// Environment entering `site` for `cols` columns: `[cols, left bonds of site]`.
    fn env_in(&self, site: usize, cols: usize) -> Labeled<Shape> {
        let value = std::iter::once(cols)
            .chain(self.stack().site(site).iter().map(|s| s[0]))
            .collect();
        Labeled {
            legs: legs::env_in(self.layers()),
            value,
        }
    }

    /// S entering `site` from the right: `[right bonds of site, output bond right of site]`.
    fn proj_in(&self, site: usize) -> Labeled<Shape> {
        let out = self.shape.out_bond_right(site);
        let value = self
            .stack()
            .site(site)
            .iter()
            .map(|s| s[1])
            .chain(std::iter::once(out))
            .collect();
        Labeled {
            legs: legs::proj_in(self.layers()),
            value,
        }
    }

    /// Basis η of `site` (conjugated or not): `[bond left, Up, Down, bond right]`.
    fn basis(&self, site: usize) -> Labeled<Shape> {
        let (up, down) = self.stack().output_phys(site);
        let (left, right) = (
            self.shape.out_bond_left(site),
            self.shape.out_bond_right(site),
        );
        Labeled {
            legs: legs::basis(),
            value: vec![left, up, down, right],
        }
    }

    /// Dry-run cost of the env task of `site` over `width` sketch columns.
    fn env_cost(&self, site: usize, width: usize) -> Meter {
        let (up, down) = self.stack().output_phys(site);
        let omega = Labeled {
            legs: legs::omega(),
            value: vec![up, down, width],
        };
        let mut cost = Meter::default();
        kernels::env(
            &self.env_in(site, width),
            &self.cores(site),
            &omega,
            &mut cost,
        );
        cost
    }

    /// Dry-run cost of the sketch task of `site` over `width` sketch columns.
    fn sketch_cost(&self, site: usize, width: usize) -> Meter {
        if self.folds(site) {
            self.folded_sketch_cost(site, width)
        } else {
            self.unfolded_sketch_cost(site, width)
        }
    }

    /// Dry-run cost of the project task of `site` over `rows` rows of its basis (output bond
    /// columns of S).
    fn project_cost(&self, site: usize, rows: usize) -> Meter {
        if self.folds(site) {
            self.folded_project_cost(site, rows)
        } else {
            self.unfolded_project_cost(site, rows)
        }
    }

    /// Dry-run cost of a sketch that contracts the cores itself.
    fn unfolded_sketch_cost(&self, site: usize, width: usize) -> Meter {
        let mut cost = Meter::default();
        kernels::sketch(
            &self.env_in(site, width),
            &self.cores(site),
            &self.proj_in(site),
            &mut cost,
        );
        cost
    }

    /// Dry-run cost of a projection that contracts the cores itself.
    fn unfolded_project_cost(&self, site: usize, rows: usize) -> Meter {
        let mut cost = Meter::default();
        let basis = self.basis_rows(site, rows);
        kernels::project(&basis, &self.cores(site), &self.proj_in(site), &mut cost);
        cost
    }

    /// Dry-run cost of folding the cores of `site` into S.
    fn fold_cost(&self, site: usize) -> Meter {
        let mut cost = Meter::default();
        kernels::fold_right(&self.cores(site), &self.proj_in(site), &mut cost);
        cost
    }

    /// Dry-run cost of a sketch from the folded site.
    fn folded_sketch_cost(&self, site: usize, width: usize) -> Meter {
        let mut cost = Meter::default();
        kernels::sketch_folded(&self.env_in(site, width), &self.folded(site), &mut cost);
        cost
    }

    /// Dry-run cost of a projection from the folded site.
    fn folded_project_cost(&self, site: usize, rows: usize) -> Meter {
        let mut cost = Meter::default();
        let basis = self.basis_rows(site, rows);
        kernels::project_folded(&basis, &self.folded(site), &mut cost);
        cost
    }

    /// The basis of `site` cut to `rows` rows.
    fn basis_rows(&self, site: usize, rows: usize) -> Labeled<Shape> {
        let mut basis = self.basis(site);
        basis.value[0] = rows;
        basis
    }

    /// The folded site W: `[left bonds of site, Up, Down, output bond right of site]`.
    fn folded(&self, site: usize) -> Labeled<Shape> {
        let (up, down) = self.stack().output_phys(site);
        let out = self.shape.out_bond_right(site);
        let value = self
            .stack()
            .site(site)
            .iter()
            .map(|s| s[0])
            .chain([up, down, out])
            .collect();
        Labeled {
            legs: legs::folded(self.layers()),
            value,
        }
    }

    fn push(
        &mut self,
        op: Op,
        site: usize,
        cols: Option<Cols>,
        io: (Vec<DataId>, Vec<DataId>),
        cost: Meter,
        step: usize,
    ) {
        let lane = op.lane();
        let (inputs, outputs) = io;
        let cost = cost.in_dtype(self.shape.dtype);
        let moved_bytes = if lane == Lane::Io { cost.peak_bytes } else { 0 };
        self.tasks.push(Task {
            op,
            site,
            cols,
            within: None,
            inputs,
            outputs,
            flops: cost.flops,
            peak_bytes: cost.peak_bytes,
            moved_bytes,
            lane,
            device: self.device,
            step,
        });
    }

    /// Pushes a task that copies `bytes` between devices or to one, with no flops.
    fn push_copy(
        &mut self,
        op: Op,
        site: usize,
        io: (Vec<DataId>, DataId),
        bytes: u64,
        step: usize,
    ) {
        let (inputs, output) = io;
        let cost = Meter {
            flops: 0.0,
            peak_bytes: 0,
        };
        self.push(op, site, None, (inputs, vec![output]), cost, step);
        let task = self.tasks.last_mut().expect("just pushed");
        task.peak_bytes = bytes;
        task.moved_bytes = bytes;
    }

    /// Reads the cores of `site` for `pass` once; when devices share the sweep, each device
    /// that reads them uploads its part of every core and all-gathers the others'.
    fn read_sites(&mut self, site: usize, pass: Pass, step: usize) {
        let devices = 0..self.shape.core_readers(site, pass);
        for (layer, shape) in self.stack().site(site).into_iter().enumerate() {
            let bytes = shape.iter().product::<usize>() * C128_BYTES;
            let cost = Meter {
                flops: 0.0,
                peak_bytes: bytes as u64,
            };
            let out = vec![DataId::Core { layer, site, pass }];
            self.device = 0;
            self.push(
                Op::ReadSite { layer, pass },
                site,
                None,
                (vec![], out),
                cost,
                step,
            );
            if self.sharing() {
                let of = Shared::Core { layer, site, pass };
                self.share_between(of, devices.clone().collect(), devices.clone(), step);
            }
        }
        self.device = 0;
    }

    /// Makes a replica of `of` on each device of `to` from the parts of the devices of `from`;
    /// a core's parts are first uploaded from the host.
    fn share_between(&mut self, of: Shared, from: Vec<usize>, to: Range<usize>, step: usize) {
        let site = match of {
            Shared::Core { site, .. } | Shared::Proj { site } => site,
            _ => unreachable!("only cores and S are all-gathered"),
        };
        let parts: Vec<DataId> = from
            .into_iter()
            .map(|device| DataId::Part { of, device })
            .collect();
        for &part in &parts {
            let DataId::Part { device, .. } = part else {
                unreachable!()
            };
            self.device = device;
            if matches!(of, Shared::Core { .. }) {
                let bytes = self.shape.value_bytes(part);
                self.push_copy(Op::UploadPart, site, (vec![of.whole()], part), bytes, step);
            }
        }
        for device in to {
            self.device = device;
            let replica = DataId::Replica { of, device };
            let bytes = self.shape.value_bytes(replica);
            self.push_copy(Op::AllGather, site, (parts.clone(), replica), bytes, step);
        }
    }

    /// Hands the output core `core` of `site` to the sink: `WriteSite` for a final core,
    /// `StoreDraft` for an oversampled one the rounding sweep reads back.
    fn write_site(&mut self, op: Op, site: usize, core: DataId, step: usize) {
        let bytes = self.basis(site).value.iter().product::<usize>() * C128_BYTES;
        let cost = Meter {
            flops: 0.0,
            peak_bytes: bytes as u64,
        };
        let outputs = match op {
            Op::StoreDraft => vec![DataId::Stored { site }],
            _ => vec![],
        };
        self.push(op, site, None, (vec![core], outputs), cost, step);
    }

    /// True when the sketch is wider than χ̄, so a rounding sweep must follow.
    fn rounds(&self) -> bool {
        self.shape.rounds()
    }

    /// How the right-to-left pass hands over the basis of `site`: written out, or stored as a
    /// draft for the rounding sweep (site 0, the last made, goes straight to it).
    fn hand_over(&mut self, site: usize, step: usize) {
        let basis = DataId::Basis { site };
        match (self.rounds(), site) {
            (false, _) => self.write_site(Op::WriteSite, site, basis, step),
            (true, 0) => {}
            (true, _) => self.write_site(Op::StoreDraft, site, basis, step),
        }
    }

    /// The SVD rounding sweep, left to right after the right-to-left pass: each site reads its
    /// draft back, truncates the bond on its right to χ̄ and carries Σ·Vᴴ to the next.
    fn rounding(&mut self) {
        let n = self.stack().sites();
        for site in 0..n {
            let step = 2 * n - 1 + site;
            let mut inputs = Vec::new();
            if site == 0 {
                inputs.push(DataId::Basis { site });
            } else {
                let bytes = self.basis(site).value.iter().product::<usize>() * C128_BYTES;
                let read = Meter {
                    flops: 0.0,
                    peak_bytes: bytes as u64,
                };
                let io = (vec![DataId::Stored { site }], vec![DataId::Draft { site }]);
                self.push(Op::LoadDraft, site, None, io, read, step);
                inputs.extend([DataId::Carry { site: site - 1 }, DataId::Draft { site }]);
            }
            let mut outputs = vec![DataId::Rounded { site }];
            if site + 1 < n {
                outputs.push(DataId::Carry { site });
            }
            let cost = self.round_cost(site);
            self.push(Op::Round, site, None, (inputs, outputs), cost, step);
            self.write_site(Op::WriteSite, site, DataId::Rounded { site }, step);
        }
    }

    /// Dry-run cost of the rounding step at `site`: the carry times the draft, then an SVD.
    fn round_cost(&self, site: usize) -> Meter {
        let [left, up, down, right] = self.basis(site).value[..] else {
            unreachable!("a basis has four legs")
        };
        let kept = if site == 0 {
            1
        } else {
            self.shape.chi_out.min(left)
        };
        let rows = kept * up * down;
        let product = 8.0 * (kept * left * up * down * right) as f64;
        let bytes = (kept * left + left * up * down * right + 2 * rows * right + right * right)
            * C128_BYTES;
        Meter {
            flops: product + kernels::svd_flops(rows, right),
            peak_bytes: bytes as u64,
        }
    }

    fn left_to_right(&mut self) {
        let n = self.stack().sites();
        for site in 0..n - 1 {
            self.read_sites(site, Pass::LeftToRight, site);
            for (device, cols) in self.batches.clone() {
                self.device = device;
                let cost = self.env_cost(site, cols.len());
                let mut inputs = if site > 0 {
                    vec![DataId::Env {
                        site: site - 1,
                        cols,
                    }]
                } else {
                    vec![]
                };
                inputs.extend(self.core_ids(site, Pass::LeftToRight));
                self.push(
                    Op::Env,
                    site,
                    Some(cols),
                    (inputs, vec![DataId::Env { site, cols }]),
                    cost,
                    site,
                );
            }
        }
        self.device = 0;
    }

    fn right_to_left(&mut self) {
        let n = self.stack().sites();
        for site in (1..n).rev() {
            let step = 2 * n - 2 - site;
            self.read_sites(site, Pass::RightToLeft, step);
            self.fold(site, step);
            for (device, cols) in self.batches.clone() {
                self.device = device;
                let cost = self.sketch_cost(site, cols.len());
                let mut inputs = vec![DataId::Env {
                    site: site - 1,
                    cols,
                }];
                inputs.extend(self.site_ids(site));
                self.push(
                    Op::Sketch,
                    site,
                    Some(cols),
                    (inputs, vec![DataId::Sketch { site, cols }]),
                    cost,
                    step,
                );
            }
            self.qr(site, step);
            self.project(site, step);
            self.hand_over(site, step);
        }
        let step = 2 * n - 2;
        self.read_sites(0, Pass::RightToLeft, step);
        let mut cost = Meter::default();
        kernels::sketch(
            &self.env_in(0, 1),
            &self.cores(0),
            &self.proj_in(0),
            &mut cost,
        );
        let mut inputs = self.core_ids(0, Pass::RightToLeft);
        inputs.extend(self.proj_ids(1));
        self.push(
            Op::First,
            0,
            None,
            (inputs, vec![DataId::Basis { site: 0 }]),
            cost,
            step,
        );
        self.hand_over(0, step);
    }

    /// The project tasks of `site`: each device projects its rows of the basis (scattered to
    /// it from the QR's device) in blocks as wide as the column batches, and S is all-gathered
    /// on the devices that read it next. A whole project holds the product of S with the basis
    /// and a site of every layer, whose peak grows with the rows as env's and sketch's grow
    /// with the columns. Under a cutoff applied after the QR the rows are not known before it
    /// runs, so the QR's device projects them in one task.
    fn project(&mut self, site: usize, step: usize) {
        let mut parts = Vec::new();
        for device in self.devices() {
            let rows = self.shape.device_rows(site, device);
            if rows.is_empty() {
                continue;
            }
            parts.push(device);
            self.device = device;
            let basis = if device == SweepGraph::QR_DEVICE {
                DataId::Basis { site }
            } else {
                let replica = self.on_device(Shared::Basis { site });
                let bytes = self.shape.value_bytes(replica);
                let io = (vec![DataId::Basis { site }], replica);
                self.push_copy(Op::Scatter, site, io, bytes, step);
                replica
            };
            let mut inputs = vec![basis];
            inputs.extend(self.site_ids(site));
            let output = if self.sharing() {
                DataId::Part {
                    of: Shared::Proj { site },
                    device,
                }
            } else {
                DataId::Proj { site }
            };
            self.project_rows(site, rows, (inputs, vec![output]), step);
        }
        if self.sharing() {
            let readers = if site > 1 { self.devices() } else { 0..1 };
            self.share_between(Shared::Proj { site }, parts, readers, step);
        }
        self.device = 0;
    }

    /// The project tasks of the current device over `rows` of the basis of `site`: one task,
    /// or blocks of batch width writing their slices of the output.
    fn project_rows(
        &mut self,
        site: usize,
        rows: Cols,
        io: (Vec<DataId>, Vec<DataId>),
        step: usize,
    ) {
        let whole = rows.start == 0 && rows.end == self.basis(site).value[0];
        let fixed = self.shape.qr_cutoff() > 0.0;
        if fixed || (whole && self.width >= rows.len()) {
            let cost = self.project_cost(site, rows.len());
            return self.push(Op::Project, site, None, io, cost, step);
        }
        for start in (rows.start..rows.end).step_by(self.width) {
            let block = Cols {
                start,
                end: (start + self.width).min(rows.end),
            };
            let cost = self.project_cost(site, block.len());
            self.push(Op::Project, site, Some(block), io.clone(), cost, step);
            self.tasks.last_mut().expect("just pushed").within = Some(rows);
        }
    }

    /// The QR of `site` on the QR's device, after the sketch blocks of the other devices are
    /// gathered to it.
    fn qr(&mut self, site: usize, step: usize) {
        let basis = self.basis(site).value;
        let rows: usize = basis[1..].iter().product();
        let sketch = self.shape.sketch;
        let bytes = (rows * sketch + rows * basis[0]) * C128_BYTES;
        let cost = Meter {
            flops: kernels::qr_flops(rows, sketch),
            peak_bytes: 2 * bytes as u64,
        };
        self.device = SweepGraph::QR_DEVICE;
        let mut inputs = Vec::new();
        for (device, cols) in self.batches.clone() {
            let block = DataId::Sketch { site, cols };
            if device == SweepGraph::QR_DEVICE {
                inputs.push(block);
                continue;
            }
            let of = Shared::Sketch { site, cols };
            let gathered = self.on_device(of);
            let bytes = self.shape.value_bytes(block);
            self.push_copy(Op::Gather, site, (vec![block], gathered), bytes, step);
            inputs.push(gathered);
        }
        self.push(
            Op::Qr,
            site,
            None,
            (inputs, vec![DataId::Basis { site }]),
            cost,
            step,
        );
    }

    fn exact_path(&mut self) {
        self.read_sites(0, Pass::RightToLeft, 0);
        self.read_sites(1, Pass::RightToLeft, 0);
        let mut cost = Meter::default();
        let left = kernels::site_product(&self.cores(0), &mut cost);
        let right = kernels::site_product(&self.cores(1), &mut cost);
        let (p0, p1) = (phys(&left), phys(&right));
        let bond = left.value.iter().product::<usize>() / p0;
        let small = p0.min(p1) as f64;
        cost.record(
            8.0 * (bond * p0 * p1) as f64 + 8.0 * 4.0 * (p0 * p1) as f64 * small,
            0,
        );
        let mut inputs = self.core_ids(0, Pass::RightToLeft);
        inputs.extend(self.core_ids(1, Pass::RightToLeft));
        let outputs = vec![DataId::Basis { site: 0 }, DataId::Basis { site: 1 }];
        self.push(Op::Exact, 0, None, (inputs, outputs), cost, 0);
        self.write_site(Op::WriteSite, 0, DataId::Basis { site: 0 }, 1);
        self.write_site(Op::WriteSite, 1, DataId::Basis { site: 1 }, 1);
    }
}

/// Product of the `Up` and `Down` sizes of a site product.
fn phys(product: &Labeled<Shape>) -> usize {
    use crate::tensor::Operand;
    product.dim(Leg::Up) * product.dim(Leg::Down)
}
