//! MPI ranks: ncra and nces started by `mpirun -np N` split their run across the
//! ranks as `--part` splits it across jobs ([`crate::plan::partial`]), and rank 0
//! merges the parts, received in rank order, and writes the output. Built with the
//! `mpi` cargo feature (rsmpi over the system's Open MPI); without it, a launch by
//! `mpirun` with more than one rank is refused rather than having every rank write
//! the whole output.
//!
//! Collectives never wait on a failed rank: each step that can fail is followed by
//! [`Ranks::agree`], which every rank reaches with its own outcome, so a rank that
//! cannot read an input makes every rank stop with exit status 1 and nothing written.

use crate::error::{Error, Result};
use crate::rules::partial::PartSpec;

/// The size of the MPI job this process was launched into, and its rank, from the
/// launchers' environment (Open MPI's `OMPI_COMM_WORLD_*`, PMI's and PMIx's):
/// `None` when not launched by `mpirun`/`mpiexec`/`srun`.
pub fn launched_as() -> Option<(usize, usize)> {
    let var = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<usize>().ok());
    let size = var("OMPI_COMM_WORLD_SIZE")
        .or_else(|| var("PMI_SIZE"))
        .or_else(|| var("PMIX_SIZE"))?;
    let rank = var("OMPI_COMM_WORLD_RANK")
        .or_else(|| var("PMI_RANK"))
        .or_else(|| var("PMIX_RANK"))
        .unwrap_or(0);
    Some((rank, size))
}

/// The MPI ranks of this run (`mpi` feature).
#[cfg(feature = "mpi")]
pub struct Ranks {
    _universe: mpi::environment::Universe,
    world: mpi::topology::SimpleCommunicator,
    rank: usize,
    size: usize,
}

/// The MPI ranks of this run: none can be made without the `mpi` feature (the field
/// is uninhabited, so the methods below need no stand-in bodies).
#[cfg(not(feature = "mpi"))]
pub struct Ranks {
    never: std::convert::Infallible,
}

/// Largest message sent at once (MPI counts are 32-bit).
#[cfg(feature = "mpi")]
const PIECE: usize = 1 << 30;

impl Ranks {
    /// MPI, started when this process was launched by an MPI launcher with more than
    /// one rank (`what` names the operator and mode in errors); `None` otherwise (a
    /// launch with one rank runs as one process).
    ///
    /// Errors: launched with several ranks by a build without the `mpi` feature, or
    /// for an operator or mode `supported` is false for (naming `what`); MPI cannot
    /// be initialised.
    pub fn start(what: &str, supported: bool) -> Result<Option<Ranks>> {
        let Some((rank, size)) = launched_as().filter(|&(_, n)| n > 1) else {
            return Ok(None);
        };
        if !supported {
            return Err(Error::msg(format!(
                "rank {rank} of {size}: {what} does not run across MPI ranks yet; run it as one process"
            )));
        }
        Ranks::init(rank, size)
    }

    #[cfg(feature = "mpi")]
    fn init(rank: usize, size: usize) -> Result<Option<Ranks>> {
        use mpi::traits::Communicator;
        let universe = mpi::initialize().ok_or_else(|| {
            Error::msg(format!(
                "rank {rank} of {size}: MPI could not be initialised"
            ))
        })?;
        let world = universe.world();
        let (rank, size) = (world.rank() as usize, world.size() as usize);
        Ok(Some(Ranks {
            _universe: universe,
            world,
            rank,
            size,
        }))
    }

    #[cfg(not(feature = "mpi"))]
    fn init(rank: usize, size: usize) -> Result<Option<Ranks>> {
        Err(Error::msg(format!(
            "rank {rank} of {size}: this build has no MPI support (build nco-rs with --features mpi), so it would write the whole output on every rank"
        )))
    }

    /// This rank, from 0.
    #[cfg(feature = "mpi")]
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Number of ranks.
    #[cfg(feature = "mpi")]
    pub fn size(&self) -> usize {
        self.size
    }

    /// This rank, from 0.
    #[cfg(not(feature = "mpi"))]
    pub fn rank(&self) -> usize {
        match self.never {}
    }

    /// Number of ranks.
    #[cfg(not(feature = "mpi"))]
    pub fn size(&self) -> usize {
        match self.never {}
    }

    /// This rank's part of the run: part rank+1 of size.
    pub fn spec(&self) -> PartSpec {
        PartSpec {
            index: self.rank() + 1,
            count: self.size(),
        }
    }

    /// Every rank's outcome of one step (collective: every rank calls it with its
    /// own): `r` when every rank succeeded; this rank's error, naming the rank, when
    /// it failed; otherwise an error naming the lowest rank that failed.
    ///
    /// Errors: as said.
    ///
    /// The error line is printed here, before MPI is finalised (which waits for every
    /// rank), and [`Error::Reported`] returned: `mpirun` ends the job when a first rank
    /// exits with an error, so a rank that printed only at exit might never print.
    pub fn agree<T>(&self, r: Result<T>) -> Result<T> {
        let (rank, size) = (self.rank(), self.size());
        let failed = self.lowest(if r.is_err() { rank } else { size });
        let line = match &r {
            Err(Error::Reported) => return Err(Error::Reported),
            Err(e) => format!("rank {rank} of {size}: {}", e.one_line()),
            Ok(_) if failed < size => format!(
                "rank {rank} of {size}: stopped, rank {failed} failed (see its error line); nothing written"
            ),
            Ok(_) => return r,
        };
        super::error_line(&format!("{}: ERROR {line}\n", super::prog_name()));
        Err(Error::Reported)
    }

    #[cfg(feature = "mpi")]
    fn lowest(&self, mine: usize) -> usize {
        use mpi::collective::{CommunicatorCollectives, SystemOperation};
        let mut low = 0u64;
        self.world
            .all_reduce_into(&(mine as u64), &mut low, SystemOperation::min());
        low as usize
    }

    #[cfg(not(feature = "mpi"))]
    fn lowest(&self, _mine: usize) -> usize {
        match self.never {}
    }

    /// Rank 0 receives every rank's bytes in rank order (its own first); the other
    /// ranks send theirs and get `None` (collective).
    #[cfg(feature = "mpi")]
    pub fn gather(&self, mine: Vec<u8>) -> Option<Vec<Vec<u8>>> {
        use mpi::point_to_point::{Destination, Source};
        use mpi::topology::Communicator;
        if self.rank != 0 {
            let root = self.world.process_at_rank(0);
            root.send(&(mine.len() as u64));
            for piece in mine.chunks(PIECE) {
                root.send(piece);
            }
            return None;
        }
        let mut all = Vec::with_capacity(self.size);
        all.push(mine);
        for r in 1..self.size {
            let from = self.world.process_at_rank(r as i32);
            let (len, _) = from.receive::<u64>();
            let mut bytes = Vec::with_capacity(len as usize);
            while (bytes.len() as u64) < len {
                let (piece, _) = from.receive_vec::<u8>();
                bytes.extend_from_slice(&piece);
            }
            all.push(bytes);
        }
        Some(all)
    }

    /// Rank 0 receives every rank's bytes (no ranks exist without the `mpi` feature).
    #[cfg(not(feature = "mpi"))]
    pub fn gather(&self, _mine: Vec<u8>) -> Option<Vec<Vec<u8>>> {
        match self.never {}
    }

    /// The end of a split run (collective): every rank's part `mine` gathered to rank
    /// 0, which makes the output from them with `merge` and commits it; each step
    /// agreed on, so a failure anywhere leaves no output and stops every rank.
    ///
    /// Errors: as [`Ranks::agree`].
    pub fn write_on_root(
        &self,
        mine: Option<Vec<u8>>,
        merge: impl FnOnce(Vec<Vec<u8>>) -> Result<crate::target::Output>,
    ) -> Result<()> {
        let out = match self.gather(mine.unwrap_or_default()) {
            Some(all) => self.agree(merge(all).map(Some))?,
            None => self.agree(Ok(None))?,
        };
        self.agree(out.map_or(Ok(()), crate::target::Output::commit))
    }

    /// The MPI library's version line (for `-r`), when built with the `mpi` feature.
    pub fn library_version() -> Option<String> {
        #[cfg(feature = "mpi")]
        {
            mpi::environment::library_version()
                .ok()
                .and_then(|v| v.lines().next().map(|l| l.trim().to_string()))
        }
        #[cfg(not(feature = "mpi"))]
        {
            None
        }
    }
}
