//! Jobs under `mpirun --oversubscribe`: the climatology and the events job bitwise equal at
//! several rank counts and as a singleton, and failures on some ranks ending the whole job.

mod events;
mod run;
