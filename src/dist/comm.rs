//! The communicator: MPI's world when sstclim runs under `mpirun`/`srun` (or as an MPI
//! singleton), a one-rank stand-in otherwise. Only the few operations the distribution needs
//! are exposed, all on byte strings, so the rest of the crate never touches MPI types and builds
//! without MPI (the `mpi` cargo feature off, or `SSTCLIM_NO_MPI=1` at run time).
//!
//! Every operation here is collective: every rank of the communicator must call it, in the same
//! order. Callers keep that promise by calling them unconditionally (see [`super`]).

#[cfg(feature = "mpi")]
use mpi::traits::*;

/// A communicator: the world, or a node-local part of it.
pub struct Comm {
    rank: usize,
    size: usize,
    #[cfg(feature = "mpi")]
    inner: Option<mpi::topology::SimpleCommunicator>,
}

/// The MPI environment: initialised once, finalised when dropped (at the end of `main`).
pub struct World {
    comm: Comm,
    #[cfg(feature = "mpi")]
    _universe: Option<mpi::environment::Universe>,
}

impl World {
    /// Start MPI (with the `mpi` feature, when a launcher started this process and
    /// `SSTCLIM_NO_MPI` is not set); a single rank otherwise. Only the main thread calls MPI
    /// (funneled).
    pub fn init() -> World {
        #[cfg(feature = "mpi")]
        if !crate::util::knobs::no_mpi() && launched_by_mpi() {
            if let Some((universe, _)) = mpi::initialize_with_threading(mpi::Threading::Funneled) {
                let world = universe.world();
                let comm = Comm { rank: world.rank() as usize, size: world.size() as usize, inner: Some(world) };
                return World { comm, _universe: Some(universe) };
            }
        }
        World::single()
    }

    /// A one-rank world without MPI.
    pub fn single() -> World {
        World {
            comm: Comm::single(),
            #[cfg(feature = "mpi")]
            _universe: None,
        }
    }

    pub fn comm(&self) -> &Comm {
        &self.comm
    }
}

/// Whether an MPI launcher (mpirun/mpiexec of Open MPI, MPICH or Intel MPI, or Slurm's srun)
/// started this process. Without one, MPI would start as a singleton, which costs a few
/// tenths of a second (Open MPI starts a daemon) and gives one rank anyway.
pub fn launched_by_mpi() -> bool {
    const VARS: [&str; 7] = [
        "OMPI_COMM_WORLD_SIZE",
        "PMIX_RANK",
        "PMI_RANK",
        "PMI_SIZE",
        "MPI_LOCALNRANKS",
        "SLURM_PROCID",
        "MV2_COMM_WORLD_SIZE",
    ];
    VARS.iter().any(|v| std::env::var_os(v).is_some())
}

impl Comm {
    fn single() -> Comm {
        Comm {
            rank: 0,
            size: 1,
            #[cfg(feature = "mpi")]
            inner: None,
        }
    }

    pub fn rank(&self) -> usize {
        self.rank
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// Whether this is a real MPI communicator (rather than the stand-in).
    pub fn is_mpi(&self) -> bool {
        #[cfg(feature = "mpi")]
        return self.inner.is_some();
        #[cfg(not(feature = "mpi"))]
        false
    }

    /// Every rank's `mine`, in rank order, on every rank (MPI_Allgather of the lengths, then
    /// MPI_Allgatherv of the bytes).
    pub fn all_gather_bytes(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        #[cfg(feature = "mpi")]
        if let Some(c) = &self.inner {
            use mpi::datatype::PartitionMut;
            let len = i32::try_from(mine.len()).expect("message under 2 GiB");
            let mut lens = vec![0i32; self.size];
            c.all_gather_into(&len, &mut lens[..]);
            let displs: Vec<i32> = lens
                .iter()
                .scan(0i32, |at, &l| {
                    let d = *at;
                    *at += l;
                    Some(d)
                })
                .collect();
            let mut all = vec![0u8; lens.iter().map(|&l| l as usize).sum()];
            {
                let mut part = PartitionMut::new(&mut all[..], &lens[..], &displs[..]);
                c.all_gather_varcount_into(mine, &mut part);
            }
            return lens.iter().zip(&displs).map(|(&l, &d)| all[d as usize..(d + l) as usize].to_vec()).collect();
        }
        vec![mine.to_vec()]
    }

    /// The ranks that share this rank's node (shared memory): MPI_Comm_split_type with
    /// MPI_COMM_TYPE_SHARED, ranked as in this communicator.
    pub fn split_node(&self) -> Comm {
        #[cfg(feature = "mpi")]
        if let Some(c) = &self.inner {
            let node = c.split_shared(self.rank as i32);
            return Comm { rank: node.rank() as usize, size: node.size() as usize, inner: Some(node) };
        }
        Comm::single()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_rank_stand_in() {
        let w = World::single();
        let c = w.comm();
        assert_eq!((c.rank(), c.size(), c.is_mpi()), (0, 1, false));
        assert_eq!(c.all_gather_bytes(b"abc"), vec![b"abc".to_vec()]);
        let node = c.split_node();
        assert_eq!((node.rank(), node.size()), (0, 1));
    }
}
