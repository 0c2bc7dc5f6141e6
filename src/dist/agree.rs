//! The one agreement point of both jobs (`run` and `events` across ranks): every rank's local
//! outcome goes to every rank (one all-gather of a status each rank reaches whatever happened,
//! so a failure on one rank never leaves another waiting in a collective), and either every
//! rank has every rank's value, in rank order, or every rank fails with the same message
//! naming the failed rank(s). A job calls it before each collective step that could otherwise
//! hang on a rank that failed.

use std::fmt::Display;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::comm::Comm;

/// What the ranks agreed went wrong: one line per distinct message, naming the rank(s)
/// ([`describe_failures`]). A job's error type takes it in (`From`), so that the agreement
/// gives back the job's own error type.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RanksFailed(pub String);

/// Every rank's `local` outcome on every rank: the values in rank order, or one error naming
/// the failing ranks, the same on every rank. A single rank keeps its own error as it is.
/// Collective: every rank of `comm` calls it, in the same order.
pub fn agree<T, E>(comm: &Comm, local: Result<T, E>) -> Result<Vec<T>, E>
where
    T: Serialize + DeserializeOwned,
    E: Display + From<RanksFailed>,
{
    if comm.size() == 1 {
        return local.map(|v| vec![v]);
    }
    let status: Result<T, String> = local.map_err(|e| e.to_string());
    let bytes = serde_json::to_vec(&status).unwrap_or_else(|e| {
        serde_json::to_vec(&Err::<(), String>(format!("cannot encode status: {e}"))).expect("text")
    });
    let mut values = Vec::with_capacity(comm.size());
    let mut failures = Vec::new();
    for (r, b) in comm.all_gather_bytes(&bytes).iter().enumerate() {
        match serde_json::from_slice::<Result<T, String>>(b) {
            Ok(Ok(v)) => values.push(v),
            Ok(Err(message)) => failures.push((r, message)),
            Err(e) => failures.push((r, format!("unreadable status: {e}"))),
        }
    }
    if failures.is_empty() {
        Ok(values)
    } else {
        Err(RanksFailed(describe_failures(&failures, comm.size())).into())
    }
}

/// [`agree`] on whether every rank succeeded, keeping this rank's value (which need not
/// travel).
pub fn agree_ok<T, E>(comm: &Comm, local: Result<T, E>) -> Result<T, E>
where
    E: Display + From<RanksFailed>,
{
    if comm.size() == 1 {
        return local;
    }
    let (value, status) = match local {
        Ok(v) => (Some(v), Ok(())),
        Err(e) => (None, Err(e)),
    };
    agree(comm, status)?;
    Ok(value.expect("this rank succeeded"))
}

/// One line per distinct message: `rank 1 of 3: MESSAGE`, `ranks 1, 2 of 3: MESSAGE`.
pub fn describe_failures(failures: &[(usize, String)], size: usize) -> String {
    let mut groups: Vec<(Vec<usize>, &str)> = Vec::new();
    for (r, m) in failures {
        match groups.iter_mut().find(|(_, g)| g == m) {
            Some((ranks, _)) => ranks.push(*r),
            None => groups.push((vec![*r], m)),
        }
    }
    groups
        .iter()
        .map(|(ranks, m)| {
            let list = ranks.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", ");
            let s = if ranks.len() == 1 { "" } else { "s" };
            format!("rank{s} {list} of {size}: {m}")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::comm::World;

    #[test]
    fn failures_are_grouped_by_message() {
        let f = vec![(1, "a.nc: bad".to_string()), (2, "a.nc: bad".to_string()), (4, "b.nc: gone".to_string())];
        assert_eq!(describe_failures(&f, 5), "ranks 1, 2 of 5: a.nc: bad\nrank 4 of 5: b.nc: gone");
        assert_eq!(describe_failures(&f[2..], 5), "rank 4 of 5: b.nc: gone");
    }

    /// A job's error type, as `run`'s and `events`' are: its own variants and the agreement's.
    #[derive(Debug, PartialEq, thiserror::Error)]
    enum JobError {
        #[error("own: {0}")]
        Own(String),
        #[error("{0}")]
        Ranks(String),
    }

    impl From<RanksFailed> for JobError {
        fn from(e: RanksFailed) -> JobError {
            JobError::Ranks(e.0)
        }
    }

    #[test]
    fn one_rank_keeps_its_own_value_and_error() {
        let w = World::single();
        assert_eq!(agree::<u32, JobError>(w.comm(), Ok(7)).unwrap(), vec![7]);
        let own = JobError::Own("a.nc: gone".into());
        assert_eq!(agree::<u32, JobError>(w.comm(), Err(own)).unwrap_err(), JobError::Own("a.nc: gone".into()));
        assert_eq!(agree_ok::<Vec<u8>, JobError>(w.comm(), Ok(vec![1, 2])).unwrap(), vec![1, 2]);
    }
}
