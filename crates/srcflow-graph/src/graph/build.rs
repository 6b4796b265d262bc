//! Building the sweep graph from the stack's shapes (no data is read).

use super::{Cols, DataId, GraphOptions, Lane, Op, Pass, Shared, SweepGraph, Task};
use crate::train::StackShape;
use petgraph::stable_graph::{NodeIndex, StableDiGraph};
use srcflow_tensor::error::Result;
use srcflow_tensor::kernels::OrderMemo;
use srcflow_tensor::tensor::{Meter, Work};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

/// Bytes of a complex128 element: dry-run costs are counted in complex128 and scaled to the
/// graph's element type in one place ([`Meter::in_dtype`]).
const C128_BYTES: usize = 16;

impl SweepGraph {
    /// Builds the graph of one SRC sweep over `stack`.
    pub fn build(stack: &StackShape, options: &GraphOptions) -> Result<SweepGraph> {
        stack.check(None)?;
        options.check()?;
        let dtype = options.dtype_for(stack)?;
        let max_rank = stack.max_rank();
        let sketch = options.sketch_for(stack);
        let batch = options.batch_cols.unwrap_or(sketch).min(sketch);
        let mut graph = SweepGraph {
            graph: StableDiGraph::new(),
            stack: stack.clone(),
            chi_out: options.chi_out.min(max_rank),
            chi_out_asked: (options.chi_out > max_rank).then_some(options.chi_out),
            sketch,
            cutoff: options.cutoff,
            dtype,
            out_bonds: stack.sweep_bonds(sketch),
            devices: if stack.sites() == 2 {
                1
            } else {
                options.devices
            },
            ranks: 1,
            planned_fetch_window: None,
            fold: options.fold,
            unfolded: Default::default(),
        };
        let memo = RefCell::default();
        let folding = (0..graph.sites())
            .map(|site| graph.folds_remembering(site, &memo))
            .collect();
        let mut builder = Builder {
            folding,
            memo: &memo,
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
        graph.charge_left_edge();
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
    /// The env or sketch task of `site` over `width` sketch columns, or the project task over
    /// `width` rows of its basis, with its contraction orders and dry-run cost (`None` for
    /// other operations, which have no batch).
    pub fn batch_task(&self, op: Op, site: usize, width: usize) -> Option<Task> {
        let memo = RefCell::default();
        let builder = Builder::dry(self, Vec::new(), &memo);
        let cols = Cols {
            start: 0,
            end: width,
        };
        match op {
            Op::Env => Some(builder.env_task(site, cols)),
            Op::Sketch => Some(builder.sketch_task(site, cols)),
            Op::Project => Some(builder.project_task(site, Some(cols), DataId::Basis { site })),
            _ => None,
        }
    }

    /// True when the right-to-left pass folds the cores of `site` into S once (an
    /// [`Op::Fold`] task) for its sketch and its projection: when the graph allows it, on one
    /// device, at an inner site (1..n), where that does fewer flops than contracting the
    /// cores in both kernels.
    pub fn folds(&self, site: usize) -> bool {
        self.folds_remembering(site, &RefCell::default())
    }

    /// [`SweepGraph::folds`], with the contraction orders chosen before in this build in
    /// `memo`.
    fn folds_remembering(&self, site: usize, memo: &RefCell<OrderMemo>) -> bool {
        let inner = site > 0 && site < self.sites() && self.sites() > 2;
        if !self.fold || self.devices > 1 || !inner || self.unfolded.contains(&site) {
            return false;
        }
        let flops = |folds: bool| {
            let mut folding = vec![false; self.sites()];
            folding[site] = folds;
            let builder = Builder::dry(self, folding, memo);
            let rows = Cols {
                start: 0,
                end: self.out_bond_left(site),
            };
            let all = Cols {
                start: 0,
                end: self.sketch,
            };
            let fold = folds.then(|| builder.fold_task(site));
            let sketch = builder.sketch_task(site, all);
            let project = builder.project_task(site, Some(rows), DataId::Basis { site });
            fold.iter()
                .chain([&sketch, &project])
                .map(|task| task.flops)
                .sum::<f64>()
        };
        flops(true) < flops(false)
    }
}

/// Adds an edge from every producer of each input (the blocks of a batched project task each
/// write a slice of their output) to its consumer.
fn connect(tasks: Vec<Task>) -> StableDiGraph<Arc<Task>, DataId> {
    let mut graph = StableDiGraph::new();
    let nodes: Vec<NodeIndex> = tasks
        .into_iter()
        .map(|t| graph.add_node(Arc::new(t)))
        .collect();
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
    /// Whether each site folds, decided once per graph (empty for dry-run costs, which then
    /// ask the graph).
    folding: Vec<bool>,
    /// The contraction orders chosen so far in this build.
    memo: &'a RefCell<OrderMemo>,
}

impl<'a> Builder<'a> {
    /// A builder for dry-run costs of `shape`'s tasks with sites folding as `folding` says (as
    /// the graph decides where it says nothing), pushing none.
    /// The contraction orders its tasks choose go into `memo`.
    fn dry(shape: &'a SweepGraph, folding: Vec<bool>, memo: &'a RefCell<OrderMemo>) -> Self {
        Builder {
            shape,
            batches: Vec::new(),
            width: shape.sketch,
            device: 0,
            tasks: Vec::new(),
            folding,
            memo,
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

    /// A compute task of the current device, with its kernel's dry-run cost.
    fn kernel_task(
        &self,
        op: Op,
        site: usize,
        cols: Option<Cols>,
        io: (Vec<DataId>, Vec<DataId>),
    ) -> Task {
        let (inputs, outputs) = io;
        let mut task = Task {
            op,
            site,
            cols,
            within: None,
            inputs,
            outputs,
            flops: 0.0,
            work: Work::default(),
            orders: Default::default(),
            peak_bytes: 0,
            moved_bytes: 0,
            lane: op.lane(),
            device: self.device,
            rank: 0,
            step: 0,
        };
        let (orders, cost) = self.shape.choose_orders(&task, &mut self.memo.borrow_mut());
        task.orders = orders;
        task.flops = cost.flops;
        task.work = cost.work;
        task.peak_bytes = cost.peak_bytes;
        task
    }

    /// The env task of `site` over `cols`: C_site from C_site-1 and the cores.
    fn env_task(&self, site: usize, cols: Cols) -> Task {
        let mut inputs = if site > 0 {
            vec![DataId::Env {
                site: site - 1,
                cols,
            }]
        } else {
            vec![]
        };
        inputs.extend(self.core_ids(site, Pass::LeftToRight));
        let io = (inputs, vec![DataId::Env { site, cols }]);
        self.kernel_task(Op::Env, site, Some(cols), io)
    }

    /// The fold task of `site`: its cores into the S to its right.
    fn fold_task(&self, site: usize) -> Task {
        let mut inputs = self.core_ids(site, Pass::RightToLeft);
        inputs.extend(self.proj_ids(site + 1));
        let io = (inputs, vec![DataId::Folded { site }]);
        self.kernel_task(Op::Fold, site, None, io)
    }

    /// The sketch task of `site` over `cols`: Y_site from C_site-1 and the site to the right.
    fn sketch_task(&self, site: usize, cols: Cols) -> Task {
        let mut inputs = vec![DataId::Env {
            site: site - 1,
            cols,
        }];
        inputs.extend(self.site_ids(site));
        let io = (inputs, vec![DataId::Sketch { site, cols }]);
        self.kernel_task(Op::Sketch, site, Some(cols), io)
    }

    /// A project task of `site` reading `basis`, over `rows` of it (`None`: all it holds).
    fn project_task(&self, site: usize, rows: Option<Cols>, basis: DataId) -> Task {
        let mut inputs = vec![basis];
        inputs.extend(self.site_ids(site));
        let output = if self.sharing() {
            DataId::Part {
                of: Shared::Proj { site },
                device: self.device,
            }
        } else {
            DataId::Proj { site }
        };
        self.kernel_task(Op::Project, site, rows, (inputs, vec![output]))
    }

    /// Pushes `task` at sweep step `step`.
    fn push_task(&mut self, mut task: Task, step: usize) {
        task.step = step;
        self.tasks.push(task);
    }

    /// Pushes a task that moves data, costed in complex128 by `cost`.
    fn push(
        &mut self,
        op: Op,
        site: usize,
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
            cols: None,
            within: None,
            inputs,
            outputs,
            flops: cost.flops,
            work: cost.work,
            orders: Default::default(),
            peak_bytes: cost.peak_bytes,
            moved_bytes,
            lane,
            device: self.device,
            rank: 0,
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
        self.push(op, site, (inputs, vec![output]), Meter::default(), step);
        let task = self.tasks.last_mut().expect("just pushed");
        task.peak_bytes = bytes;
        task.moved_bytes = bytes;
    }

    /// Pushes an io task that reads or writes the value `id` (its bytes in complex128).
    fn push_io(
        &mut self,
        op: Op,
        site: usize,
        io: (Vec<DataId>, Vec<DataId>),
        id: DataId,
        step: usize,
    ) {
        let elements: usize = self.shape.value_dims(id).iter().product();
        let cost = Meter {
            peak_bytes: (elements * C128_BYTES) as u64,
            ..Meter::default()
        };
        self.push(op, site, io, cost, step);
    }

    /// Reads the cores of `site` for `pass` once; when devices share the sweep, each device
    /// that reads them uploads its part of every core and all-gathers the others'.
    fn read_sites(&mut self, site: usize, pass: Pass, step: usize) {
        let devices = 0..self.shape.core_readers(site, pass);
        for layer in 0..self.layers() {
            let core = DataId::Core { layer, site, pass };
            self.device = 0;
            let io = (vec![], vec![core]);
            self.push_io(Op::ReadSite { layer, pass }, site, io, core, step);
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
    /// `StoreDraft` for a draft the rounding sweep reads back.
    fn write_site(&mut self, op: Op, site: usize, core: DataId, step: usize) {
        let outputs = match op {
            Op::StoreDraft => vec![DataId::Stored { site }],
            _ => vec![],
        };
        let basis = DataId::Basis { site };
        self.push_io(op, site, (vec![core], outputs), basis, step);
    }

    /// True when a rounding sweep must follow: the sketch is wider than χ̄, or a cutoff is set.
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
                let draft = DataId::Draft { site };
                let io = (vec![DataId::Stored { site }], vec![draft]);
                self.push_io(Op::LoadDraft, site, io, draft, step);
                inputs.extend([DataId::Carry { site: site - 1 }, draft]);
            }
            let mut outputs = vec![DataId::Rounded { site }];
            if site + 1 < n {
                outputs.push(DataId::Carry { site });
            }
            let round = self.kernel_task(Op::Round, site, None, (inputs, outputs));
            self.push_task(round, step);
            self.write_site(Op::WriteSite, site, DataId::Rounded { site }, step);
        }
    }

    fn left_to_right(&mut self) {
        let n = self.stack().sites();
        for site in 0..n - 1 {
            self.read_sites(site, Pass::LeftToRight, site);
            for (device, cols) in self.batches.clone() {
                self.device = device;
                let env = self.env_task(site, cols);
                self.push_task(env, site);
            }
        }
        self.device = 0;
    }

    fn right_to_left(&mut self) {
        let n = self.stack().sites();
        for site in (1..n).rev() {
            let step = 2 * n - 2 - site;
            self.read_sites(site, Pass::RightToLeft, step);
            if self.folds(site) {
                let fold = self.fold_task(site);
                self.push_task(fold, step);
            }
            for (device, cols) in self.batches.clone() {
                self.device = device;
                let sketch = self.sketch_task(site, cols);
                self.push_task(sketch, step);
            }
            self.qr(site, step);
            self.project(site, step);
            self.hand_over(site, step);
        }
        let step = 2 * n - 2;
        self.read_sites(0, Pass::RightToLeft, step);
        let mut inputs = self.core_ids(0, Pass::RightToLeft);
        inputs.extend(self.proj_ids(1));
        let first = self.kernel_task(
            Op::First,
            0,
            None,
            (inputs, vec![DataId::Basis { site: 0 }]),
        );
        self.push_task(first, step);
        self.hand_over(0, step);
    }

    /// The project tasks of `site`: each device projects its rows of the basis (scattered to
    /// it from the QR's device) in blocks as wide as the column batches, and S is all-gathered
    /// on the devices that read it next. A whole project holds the product of S with the basis
    /// and a site of every layer, whose peak grows with the rows as env's and sketch's grow
    /// with the columns.
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
            self.project_rows(site, rows, basis, step);
        }
        if self.sharing() {
            let readers = if site > 1 { self.devices() } else { 0..1 };
            self.share_between(Shared::Proj { site }, parts, readers, step);
        }
        self.device = 0;
    }

    /// The project tasks of the current device over `rows` of the basis of `site`: one task,
    /// or blocks of batch width writing their slices of the output.
    fn project_rows(&mut self, site: usize, rows: Cols, basis: DataId, step: usize) {
        let whole = rows.start == 0 && rows.end == self.shape.out_bond_left(site);
        if whole && self.width >= rows.len() {
            let task = self.project_task(site, None, basis);
            return self.push_task(task, step);
        }
        for start in (rows.start..rows.end).step_by(self.width) {
            let block = Cols {
                start,
                end: (start + self.width).min(rows.end),
            };
            let mut task = self.project_task(site, Some(block), basis);
            task.within = Some(rows);
            self.push_task(task, step);
        }
    }

    /// The QR of `site` on the QR's device, after the sketch blocks of the other devices are
    /// gathered to it.
    fn qr(&mut self, site: usize, step: usize) {
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
        let qr = self.kernel_task(Op::Qr, site, None, (inputs, vec![DataId::Basis { site }]));
        self.push_task(qr, step);
    }

    fn exact_path(&mut self) {
        self.read_sites(0, Pass::RightToLeft, 0);
        self.read_sites(1, Pass::RightToLeft, 0);
        let mut inputs = self.core_ids(0, Pass::RightToLeft);
        inputs.extend(self.core_ids(1, Pass::RightToLeft));
        let outputs = vec![DataId::Basis { site: 0 }, DataId::Basis { site: 1 }];
        let exact = self.kernel_task(Op::Exact, 0, None, (inputs, outputs));
        self.push_task(exact, 0);
        self.write_site(Op::WriteSite, 0, DataId::Basis { site: 0 }, 1);
        self.write_site(Op::WriteSite, 1, DataId::Basis { site: 1 }, 1);
    }
}
