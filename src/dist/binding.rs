//! Device and CPU binding of a rank, from its node-local rank.
//!
//! The node-local rank comes from MPI (a shared-memory split of the world, see
//! [`Comm::split_node`]), not from launcher environment variables, so it is right under
//! `mpirun`, `srun` and any rank placement. A rank's GPU is the node-local rank modulo the
//! devices that `HIP_VISIBLE_DEVICES`, `ROCR_VISIBLE_DEVICES` or `CUDA_VISIBLE_DEVICES`
//! expose (ordinals count within that list, as the runtimes renumber them); when Slurm gives
//! each task its own device the list has one entry and the ordinal is 0. GPU engines take
//! [`Binding::device_ordinal`]; host engines use [`Binding::threads`]: the CPUs this rank may
//! run on (`sched_getaffinity`), shared out among the node's ranks whose CPU sets overlap.

use super::comm::Comm;

/// The environment variables that restrict the visible devices, in the order they are consulted.
pub const DEVICE_VARS: [&str; 3] = ["HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"];

/// Where a rank runs.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Binding {
    pub host: String,
    pub node_rank: usize,
    pub node_size: usize,
    /// The variable that limits the visible devices and its entries, if one is set.
    pub visible_devices: Option<(String, Vec<String>)>,
    /// CPUs this rank may run on.
    pub cpus: Vec<usize>,
    /// Worker threads for host engines.
    pub threads: usize,
}

/// The device list of the first of [`DEVICE_VARS`] that `env` has.
pub fn visible_devices(env: impl Fn(&str) -> Option<String>) -> Option<(String, Vec<String>)> {
    DEVICE_VARS.iter().find_map(|&var| {
        let value = env(var)?;
        let list = value.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect();
        Some((var.to_string(), list))
    })
}

/// The device ordinal for node-local rank `node_rank` when `visible` devices are exposed
/// (`None`: no list, the runtime shows every device and the engine takes the ordinal modulo
/// its device count).
pub fn device_ordinal(node_rank: usize, visible: Option<usize>) -> usize {
    match visible {
        Some(n) if n > 0 => node_rank % n,
        _ => node_rank,
    }
}

/// Threads for the rank whose CPU set is `mine`, given the CPU sets of every rank on the node
/// (including its own): its CPUs divided by the number of ranks whose sets overlap it, at
/// least one. Ranks pinned to disjoint cores keep all of theirs; unpinned ranks share.
pub fn threads_for(mine: &[usize], node: &[Vec<usize>]) -> usize {
    let sharing = node.iter().filter(|other| other.iter().any(|c| mine.contains(c))).count().max(1);
    (mine.len() / sharing).max(1)
}

/// The CPUs this process may run on.
pub fn affinity() -> Vec<usize> {
    // SAFETY: sched_getaffinity fills the zeroed set we own; CPU_ISSET reads it in bounds.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect();
        }
        (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
    }
}

/// This machine's host name.
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    if ok {
        String::from_utf8_lossy(&buf[..end]).into_owned()
    } else {
        "unknown".into()
    }
}

impl Binding {
    /// Work out this rank's binding. Collective over `world` (a node split and a gather of the
    /// node's CPU sets).
    pub fn resolve(world: &Comm) -> Binding {
        let node = world.split_node();
        let cpus = affinity();
        let encoded: Vec<u8> = cpus.iter().flat_map(|&c| (c as u32).to_le_bytes()).collect();
        let node_sets: Vec<Vec<usize>> = node
            .all_gather_bytes(&encoded)
            .iter()
            .map(|b| b.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as usize).collect())
            .collect();
        Binding {
            host: hostname(),
            node_rank: node.rank(),
            node_size: node.size(),
            visible_devices: visible_devices(|v| std::env::var(v).ok()),
            threads: threads_for(&cpus, &node_sets),
            cpus,
        }
    }

    /// A lone process: node rank 0 of 1, all its CPUs.
    pub fn single() -> Binding {
        let cpus = affinity();
        Binding {
            host: hostname(),
            node_rank: 0,
            node_size: 1,
            visible_devices: visible_devices(|v| std::env::var(v).ok()),
            threads: cpus.len().max(1),
            cpus,
        }
    }

    /// How many devices the visible-device list exposes (`None`: no list set).
    pub fn visible_count(&self) -> Option<usize> {
        self.visible_devices.as_ref().map(|(_, l)| l.len())
    }

    /// The ordinal of this rank's GPU among the visible devices.
    pub fn device_ordinal(&self) -> usize {
        device_ordinal(self.node_rank, self.visible_devices.as_ref().map(|(_, l)| l.len()))
    }

    /// One line for the log.
    pub fn describe(&self) -> String {
        let devices = match &self.visible_devices {
            Some((var, list)) => format!("{var}={}", list.join(",")),
            None => "no device list set".into(),
        };
        format!(
            "{} node rank {}/{}: device ordinal {} ({devices}), {} CPUs, {} threads",
            self.host,
            self.node_rank,
            self.node_size,
            self.device_ordinal(),
            self.cpus.len(),
            self.threads
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn devices_come_from_the_first_variable_set() {
        let env: HashMap<&str, &str> = [("CUDA_VISIBLE_DEVICES", "0,1"), ("ROCR_VISIBLE_DEVICES", "2, 3,5")].into();
        let got = visible_devices(|v| env.get(v).map(|s| s.to_string())).unwrap();
        assert_eq!(got, ("ROCR_VISIBLE_DEVICES".to_string(), vec!["2".into(), "3".into(), "5".into()]));
        assert_eq!(visible_devices(|_| None), None);
        let empty = visible_devices(|v| (v == "HIP_VISIBLE_DEVICES").then(String::new)).unwrap();
        assert!(empty.1.is_empty());
    }

    #[test]
    fn ordinals_wrap_within_the_visible_devices() {
        // 4 ranks per node over 4 DCUs: one each; over 2 devices: two ranks each
        assert_eq!((0..4).map(|r| device_ordinal(r, Some(4))).collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert_eq!((0..4).map(|r| device_ordinal(r, Some(2))).collect::<Vec<_>>(), [0, 1, 0, 1]);
        // Slurm binds one device per task: each rank sees one, ordinal 0
        assert_eq!(device_ordinal(3, Some(1)), 0);
        // no list: the node rank (the engine wraps it by its device count)
        assert_eq!(device_ordinal(3, None), 3);
        assert_eq!(device_ordinal(3, Some(0)), 3);
    }

    #[test]
    fn threads_share_overlapping_cpu_sets() {
        let all: Vec<usize> = (0..8).collect();
        // 4 unpinned ranks on 8 CPUs: 2 each
        assert_eq!(threads_for(&all, &vec![all.clone(); 4]), 2);
        // pinned to disjoint halves: 4 each
        let (a, b) = ((0..4).collect::<Vec<_>>(), (4..8).collect::<Vec<_>>());
        assert_eq!(threads_for(&a, &[a.clone(), b.clone()]), 4);
        // more ranks than CPUs: at least one thread
        assert_eq!(threads_for(&[0, 1], &vec![vec![0, 1]; 4]), 1);
        // alone
        assert_eq!(threads_for(&all, std::slice::from_ref(&all)), 8);
    }

    #[test]
    fn this_process_has_cpus_and_a_name() {
        let b = Binding::single();
        assert!(!b.cpus.is_empty() && b.threads == b.cpus.len());
        assert!(!b.host.is_empty());
        assert_eq!(b.node_size, 1);
    }
}
