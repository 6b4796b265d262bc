//! `ExchangeLane`: the network lane of a rank. It runs the run's exchanges in order, handing
//! the transport the values this rank's send tasks posted (the transport packs them into its
//! own buffer) and unpacking those its receive tasks wait for. The row blocks of an S that
//! every rank that reads it receives whole are gathered in place instead: this rank's are
//! copied into the buffer of the whole S, and the others' arrive into it
//! ([`Exchange::in_place`]).

use super::exchange_plan::{Collective, Exchange};
use super::transport::slot;
use super::wire::{decode_tensors, Encoded};
use super::{ExchangeUse, Payload, Transport};
use crate::sched::{Done, Job, NetworkLane};
use crate::store::Value;
use crossbeam_channel::{never, select, unbounded, Receiver, Sender};
use num_complex::Complex64;
use srcflow_graph::graph::TaskId;
use srcflow_graph::graph::{DataId, Shared, Task};
use srcflow_tensor::backend::PrimitiveTimes;
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::tensor::{AnyTensor, Array};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often the lane, waiting for this rank's values, looks for another rank's failure.
const NOTICE_POLL: Duration = Duration::from_millis(100);

/// A value a send task posts to the network lane.
pub type Post = (DataId, AnyTensor);

/// The network lane of one rank (see the module documentation).
pub struct ExchangeLane {
    transport: Arc<dyn Transport>,
    exchanges: Vec<Exchange>,
    posts: (Sender<Post>, Receiver<Post>),
    stop: (Sender<()>, Receiver<()>),
    /// The first error of an exchange, kept for the engine when no task was left to fail.
    failure: Mutex<Option<Error>>,
    /// Whether it is inside an exchange (its reports for it not all sent yet).
    in_exchange: AtomicBool,
    /// What each kind of exchange did so far, by kind.
    uses: Mutex<BTreeMap<String, ExchangeUse>>,
}

/// What the lane holds while it serves: receive tasks waiting (with how many values each
/// makes), values arrived before their receive task started, and values posted for exchanges
/// to come. Receive tasks and values meet by [`receive_key`].
#[derive(Default)]
struct Held {
    waiting: HashMap<DataId, (TaskId, Instant, usize)>,
    arrived: HashMap<DataId, AnyTensor>,
    posted: HashMap<DataId, AnyTensor>,
    /// Whether the dispatcher has finished (no more receive tasks come).
    jobs_closed: bool,
}

impl ExchangeLane {
    /// The lane that runs `exchanges` (in order) over `transport`.
    pub fn new(transport: Arc<dyn Transport>, exchanges: Vec<Exchange>) -> Self {
        ExchangeLane {
            transport,
            exchanges,
            posts: unbounded(),
            stop: unbounded(),
            failure: Mutex::new(None),
            in_exchange: AtomicBool::new(false),
            uses: Mutex::new(BTreeMap::new()),
        }
    }

    /// What each kind of exchange did, by kind.
    pub fn take_uses(&self) -> Vec<ExchangeUse> {
        let mut uses = self.uses.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut *uses).into_values().collect()
    }

    /// Counts `exchange`, which took `seconds`, in its kind's use.
    fn count(&self, exchange: &Exchange, seconds: f64) {
        let what = ExchangeUse::kind_of(exchange);
        let mut uses = self.uses.lock().unwrap_or_else(|e| e.into_inner());
        let used = uses.entry(what.clone()).or_insert(ExchangeUse {
            what,
            count: 0,
            bytes: 0,
            seconds: 0.0,
        });
        used.count += 1;
        used.bytes += exchange.values.iter().map(|c| c.bytes).sum::<u64>();
        used.seconds += seconds;
    }

    /// Where send tasks post the values other ranks read.
    pub fn poster(&self) -> Sender<Post> {
        self.posts.0.clone()
    }

    /// The error that stopped the exchanges, if one did.
    pub fn take_failure(&self) -> Option<Error> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// Runs `exchange`: waits until this rank is ready for it ([`Self::ready_for`]), runs the
    /// collective, and hands over the values this rank reads.
    fn run(
        &self,
        exchange: &Exchange,
        jobs: &Receiver<Job>,
        done: &Sender<Done>,
        held: &mut Held,
    ) -> Result<()> {
        let rank = self.transport.rank();
        let mine: Vec<DataId> = exchange.made_by(rank).map(|c| c.id).collect();
        while !self.ready_for(exchange, &mine, held) {
            if held.jobs_closed {
                held.posted.extend(self.posts.1.try_iter());
                if let Some(id) = mine.iter().find(|id| !held.posted.contains_key(id)) {
                    return Err(Error::Invalid(format!(
                        "rank {rank} stopped before it made {id}, which other ranks read"
                    )));
                }
                break;
            }
            self.take_one(jobs, done, held)?;
        }
        let tensors: Vec<AnyTensor> = mine
            .iter()
            .map(|id| held.posted.remove(id).expect("posted"))
            .collect();
        let started = Instant::now();
        self.in_exchange.store(true, Ordering::SeqCst);
        let arrived = match &exchange.in_place {
            Some(dims) => self.all_gather_in_place(exchange, dims, tensors),
            None => self.collective(exchange, &Encoded(&tensors)),
        };
        let arrived = arrived.inspect_err(|_| self.in_exchange.store(false, Ordering::SeqCst))?;
        self.count(exchange, started.elapsed().as_secs_f64());
        for (id, tensor) in arrived {
            match held.waiting.remove(&id) {
                Some((node, since, copies)) => {
                    report(done, node, Ok(tensor), since.max(started), copies)
                }
                None => {
                    held.arrived.insert(id, tensor);
                }
            }
        }
        self.in_exchange.store(false, Ordering::SeqCst);
        Ok(())
    }

    /// True when this rank may join `exchange`: it has posted every value it sends (`mine`),
    /// and where it sends none but reads some, a receive task for one of them waits (the
    /// receive task of a gather to this rank waits for its own part, so the lane does not poll
    /// MPI while its devices compute it). Once no more tasks come, it joins regardless.
    fn ready_for(&self, exchange: &Exchange, mine: &[DataId], held: &Held) -> bool {
        if !mine.iter().all(|id| held.posted.contains_key(id)) {
            return false;
        }
        if !mine.is_empty() || held.jobs_closed {
            return true;
        }
        let rank = self.transport.rank();
        let mut reads = exchange.values.iter().filter(|c| c.to.contains(&rank));
        let reads_none = reads.clone().next().is_none();
        if exchange.in_place.is_some() {
            return reads_none || held.waiting.contains_key(&in_place_key(exchange));
        }
        reads_none || reads.any(|c| held.waiting.contains_key(&c.id))
    }

    /// Runs the collective of `exchange` with this rank's values (`mine`); returns the values
    /// of other ranks that this rank reads.
    fn collective(
        &self,
        exchange: &Exchange,
        mine: &dyn Payload,
    ) -> Result<Vec<(DataId, AnyTensor)>> {
        let t = &*self.transport;
        let rank = t.rank();
        let mut arrived = Vec::new();
        let mut take = |from: usize, packed: &[u8]| {
            if from != rank {
                arrived.extend(unpack(exchange, rank, from, packed)?);
            }
            Ok(())
        };
        match exchange.collective {
            Collective::Broadcast { root } => t.broadcast(root, mine, &mut take)?,
            Collective::Gather { root } => t.gather(root, mine, &mut take)?,
            Collective::AllGather => t.all_gather(mine, &mut take)?,
        }
        Ok(arrived)
    }

    /// Runs the exchange of the row blocks of an S of dimensions `dims` that every rank that
    /// reads it receives whole: copies this rank's blocks (`own`, the values it makes, in
    /// packing order) into the buffer of the whole S, which the others' arrive into; returns
    /// the S (nothing on a rank that does not read it).
    fn all_gather_in_place(
        &self,
        exchange: &Exchange,
        dims: &[usize],
        own: Vec<AnyTensor>,
    ) -> Result<Vec<(DataId, AnyTensor)>> {
        let t = &*self.transport;
        let mut counts = vec![0; t.ranks()];
        for crossing in &exchange.values {
            counts[crossing.from] += crossing.bytes as usize / std::mem::size_of::<Complex64>();
        }
        let mut blocks: Vec<(usize, AnyTensor)> = exchange
            .made_by(t.rank())
            .map(|c| c.device)
            .zip(own)
            .collect();
        blocks.sort_by_key(|(device, _)| *device);
        let blocks = blocks.into_iter().map(|(_, block)| block).collect();
        let readers: Vec<usize> = exchange.readers().into_iter().collect();
        if !readers.contains(&t.rank()) {
            // A rank with no device that reads S makes none of it either (every maker reads
            // the others' blocks): it takes part in the exchange, and sends and keeps nothing.
            t.all_gather_in_place(Box::default(), &counts, &readers)?;
            return Ok(vec![]);
        }
        let key = in_place_key(exchange);
        let all = with_own_rows(key, &counts, t.rank(), blocks)?;
        let all = t.all_gather_in_place(all.into_boxed_slice(), &counts, &readers)?;
        let whole = Array::new(dims.to_vec(), all.into_vec())?;
        Ok(vec![(key, AnyTensor::Complex128(Arc::new(whole)))])
    }

    /// Takes the next post or receive task; an error once the run is given up, here or on
    /// another rank.
    fn take_one(&self, jobs: &Receiver<Job>, done: &Sender<Done>, held: &mut Held) -> Result<()> {
        let (posts, stop) = (&self.posts.1, &self.stop.1);
        let jobs = if held.jobs_closed {
            never()
        } else {
            jobs.clone()
        };
        select! {
            recv(posts) -> post => {
                let (id, tensor) = post.expect("the lane holds a sender");
                held.posted.insert(id, tensor);
            }
            recv(jobs) -> job => match job {
                Ok(job) => self.file(job, done, held),
                Err(_) => held.jobs_closed = true,
            },
            recv(stop) -> _ => return Err(Error::Interrupted),
            default(NOTICE_POLL) => self.transport.check()?,
        }
        Ok(())
    }

    /// Files receive task `job`: done at once when its value has arrived, else waiting.
    fn file(&self, job: Job, done: &Sender<Done>, held: &mut Held) {
        let (id, copies) = receive_key(&job.task);
        match held.arrived.remove(&id) {
            Some(tensor) => report(done, job.node, Ok(tensor), Instant::now(), copies),
            None => {
                held.waiting.insert(id, (job.node, Instant::now(), copies));
            }
        }
    }
}

/// What a receive task waits for, and how many values it makes of it: its value, or, for the
/// replicas of an S gathered in place (one per device of the rank that reads it,
/// [`Exchange::in_place`]), the whole S.
fn receive_key(task: &Task) -> (DataId, usize) {
    let key = match task.outputs[0] {
        DataId::Replica {
            of: of @ Shared::Proj { .. },
            ..
        } => of.whole(),
        id => id,
    };
    (key, task.outputs.len())
}

/// The buffer of `whole`, an S gathered in place (`counts[r]` elements of rank `r`'s rows, in
/// rank order), with `rank`'s rows copied in from its `blocks` (in device order); the other
/// ranks' slots are zeroed, for MPI to write.
fn with_own_rows(
    whole: DataId,
    counts: &[usize],
    rank: usize,
    blocks: Vec<AnyTensor>,
) -> Result<Vec<Complex64>> {
    let own = slot(counts, rank);
    let mut all: Vec<Complex64> = Vec::with_capacity(counts.iter().sum());
    all.resize(own.start, Complex64::default());
    for block in blocks {
        let AnyTensor::Complex128(block) = block else {
            return Err(Error::Invalid(format!(
                "a block of {whole} is {:?}, not complex128",
                block.dtype()
            )));
        };
        all.extend_from_slice(block.data());
    }
    if all.len() != own.end {
        return Err(Error::Invalid(format!(
            "this rank's blocks of {whole} hold {} elements, not {}",
            all.len() - own.start,
            own.len()
        )));
    }
    all.resize(counts.iter().sum(), Complex64::default());
    Ok(all)
}

/// The name an S gathered in place arrives under (the key of [`receive_key`]).
fn in_place_key(exchange: &Exchange) -> DataId {
    let of = exchange
        .parts_of()
        .expect("an exchange gathered in place carries parts");
    of.whole()
}

/// The values of `exchange` that rank `from` made, decoded from its `packed` bytes, that rank
/// `rank` reads.
fn unpack(
    exchange: &Exchange,
    rank: usize,
    from: usize,
    packed: &[u8],
) -> Result<Vec<(DataId, AnyTensor)>> {
    let made: Vec<_> = exchange.made_by(from).collect();
    if made.is_empty() {
        return Ok(Vec::new());
    }
    let what = format!("the values rank {from} sent for {}", made[0].id);
    let tensors = decode_tensors(packed, &what)?;
    if tensors.len() != made.len() {
        return Err(Error::Invalid(format!(
            "{what}: {} arrived, {} were expected",
            tensors.len(),
            made.len()
        )));
    }
    Ok(made
        .into_iter()
        .zip(tensors)
        .filter(|(crossing, _)| crossing.to.contains(&rank))
        .map(|(crossing, tensor)| (crossing.id, tensor))
        .collect())
}

/// Reports receive task `node` done with `tensor` (or failed) as each of its `copies` values,
/// having waited since `start`.
fn report(
    done: &Sender<Done>,
    node: TaskId,
    tensor: Result<AnyTensor>,
    start: Instant,
    copies: usize,
) {
    let _ = done.send(Done {
        node,
        result: tensor.map(|t| vec![Value::Host(t); copies]),
        start,
        end: Instant::now(),
        primitives: PrimitiveTimes::default(),
    });
}

impl ExchangeLane {
    /// Runs every exchange in order, then fails the receive tasks whose value never came.
    fn serve_exchanges(
        &self,
        jobs: &Receiver<Job>,
        done: &Sender<Done>,
        held: &mut Held,
    ) -> Result<()> {
        for exchange in &self.exchanges {
            self.run(exchange, jobs, done, held)?;
        }
        for (id, (node, since, copies)) in held.waiting.drain() {
            report(done, node, Err(never_arrived(id)), since, copies);
        }
        for job in jobs {
            let (id, copies) = receive_key(&job.task);
            let tensor = held.arrived.remove(&id).ok_or_else(|| never_arrived(id));
            report(done, job.node, tensor, Instant::now(), copies);
        }
        Ok(())
    }

    /// After `error` stopped the exchanges: tells the other ranks, fails every receive task
    /// waiting or still to come, and keeps the error for the engine.
    fn give_up(&self, error: Error, jobs: &Receiver<Job>, done: &Sender<Done>, held: &mut Held) {
        self.transport.abort(&error.to_string());
        for (_, (node, since, copies)) in held.waiting.drain() {
            report(done, node, Err(same_error(&error)), since, copies);
        }
        for job in jobs {
            let (_, copies) = receive_key(&job.task);
            report(
                done,
                job.node,
                Err(same_error(&error)),
                Instant::now(),
                copies,
            );
        }
        *self.failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
    }
}

/// The error of a receive task whose value no exchange brought.
fn never_arrived(id: DataId) -> Error {
    Error::Invalid(format!("{id} never arrived from another rank"))
}

/// The message of `error` for each task it fails (an error is not `Clone`).
fn same_error(error: &Error) -> Error {
    Error::Invalid(error.to_string())
}

impl NetworkLane for ExchangeLane {
    fn serve(&self, jobs: Receiver<Job>, done: Sender<Done>) {
        let mut held = Held::default();
        let served = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.serve_exchanges(&jobs, &done, &mut held)
        }));
        let error = match served {
            Ok(Ok(())) => return,
            Ok(Err(error)) => error,
            Err(_) => Error::Invalid("the network lane failed (a panic; see above)".into()),
        };
        self.give_up(error, &jobs, &done, &mut held);
    }

    fn abort(&self, why: &str) {
        self.transport.abort(why);
        let _ = self.stop.0.send(());
    }

    fn awaits_others(&self) -> bool {
        self.in_exchange.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::with_own_rows;
    use num_complex::{Complex32, Complex64};
    use srcflow_graph::graph::DataId;
    use srcflow_tensor::tensor::{AnyTensor, Array};
    use std::sync::Arc;

    const S5: DataId = DataId::Proj { site: 5 };

    fn block(values: &[f64]) -> AnyTensor {
        let data = values.iter().map(|&v| Complex64::new(v, -v)).collect();
        AnyTensor::Complex128(Arc::new(Array::new(vec![values.len()], data).unwrap()))
    }

    #[test]
    fn own_rows_land_in_this_ranks_slot_in_device_order_between_zeroed_slots() {
        let all = with_own_rows(S5, &[2, 3, 1], 1, vec![block(&[1.0, 2.0]), block(&[3.0])]);
        let re: Vec<f64> = all.unwrap().iter().map(|z| z.re).collect();
        assert_eq!(re, [0.0, 0.0, 1.0, 2.0, 3.0, 0.0]);
    }

    #[test]
    fn blocks_of_the_wrong_size_or_type_are_an_error_naming_the_s() {
        let err = with_own_rows(S5, &[2, 3], 1, vec![block(&[1.0])]).unwrap_err();
        assert!(
            err.to_string()
                .contains("blocks of S5 hold 1 elements, not 3"),
            "{err}"
        );
        let narrow = Array::new(vec![1], vec![Complex32::new(1.0, 0.0)]).unwrap();
        let blocks = vec![AnyTensor::Complex64(Arc::new(narrow))];
        let err = with_own_rows(S5, &[1], 0, blocks).unwrap_err();
        assert!(err.to_string().contains("a block of S5 is"), "{err}");
    }
}
