//! The Slurm scripts in `slurm/`: they parse (`bash -n`), their dry run prints the srun command
//! they resolve, and their real path hands srun exactly that command (a stand-in `srun` and
//! `module` on PATH record what they were given).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("slurm").join(name)
}

fn bash(name: &str, env: &[(&str, &str)], path_prefix: Option<&Path>) -> Output {
    let mut c = Command::new("bash");
    c.arg(script(name)).env_remove("DRY_RUN");
    for var in ["SLURM_JOB_NUM_NODES", "SLURM_CPUS_PER_TASK", "SLURM_NTASKS_PER_NODE", "SLURM_JOB_ID"] {
        c.env_remove(var);
    }
    for var in [
        "HIP_VISIBLE_DEVICES",
        "ROCR_VISIBLE_DEVICES",
        "CUDA_VISIBLE_DEVICES",
        "NODES",
        "GPUS_PER_NODE",
        "CPUS_PER_TASK",
        "MODULES",
        "GPU_FLAG",
    ] {
        c.env_remove(var);
    }
    c.env("SSTCLIM", "/opt/sstclim/bin/sstclim")
        .env("OUTPUT_DIR", "/scratch/clim")
        .env("TIMING_JSON", "/scratch/t.json");
    c.envs(env.iter().copied());
    if let Some(dir) = path_prefix {
        c.env("PATH", format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default()));
    }
    let out = c.output().expect("run bash");
    assert!(
        out.status.success(),
        "{name} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The job arguments both scripts pass (the reference job).
const JOB: &str = "run --input /DATA/sst_\\{year\\}_\\{doy\\}.nc --output /scratch/clim --baseline 1991-2020 \
                   --doys 152-243 --half-window 5 --percentile 90 --method 5 --backend BACKEND \
                   --timing-json /scratch/t.json";

#[test]
fn scripts_parse() {
    for name in ["sbatch-2x4-dcu.sh", "sbatch-generic.sh"] {
        let out = Command::new("bash").arg("-n").arg(script(name)).output().unwrap();
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn dcu_script_asks_for_2_nodes_of_4_dcus_one_rank_each() {
    let text = std::fs::read_to_string(script("sbatch-2x4-dcu.sh")).unwrap();
    for directive in ["#SBATCH --nodes=2", "#SBATCH --ntasks-per-node=4", "#SBATCH --gres=dcu:4"] {
        assert!(text.lines().any(|l| l.trim() == directive), "missing {directive}");
    }
    let out = bash("sbatch-2x4-dcu.sh", &[("DRY_RUN", "1")], None);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "module load compiler/devtoolset/7.3.1 mpi/hpcx/2.11.0/gcc-7.3.1 compiler/dtk/23.04");
    let devices = "ROCR_VISIBLE_DEVICES= CUDA_VISIBLE_DEVICES= HDF5_USE_FILE_LOCKING=FALSE";
    assert_eq!(lines[1], format!("HIP_VISIBLE_DEVICES=0,1,2,3 {devices}"));
    // a device list from Slurm's gres plugin is kept, not overridden
    let out = bash("sbatch-2x4-dcu.sh", &[("DRY_RUN", "1"), ("ROCR_VISIBLE_DEVICES", "0,1,2,3")], None);
    let line = String::from_utf8_lossy(&out.stdout).lines().nth(1).unwrap().to_string();
    assert!(line.starts_with("HIP_VISIBLE_DEVICES= ROCR_VISIBLE_DEVICES=0,1,2,3 CUDA"), "{line}");
    let expected = format!(
        "srun --nodes=2 --ntasks-per-node=4 --cpus-per-task=8 --cpu-bind=cores --gres=dcu:4 --kill-on-bad-exit=1 \
         /opt/sstclim/bin/sstclim {}",
        JOB.replace("/DATA", "/public/data/sst").replace("BACKEND", "hip")
    );
    assert_eq!(lines[2].trim_end(), expected);
    assert_eq!(lines.len(), 3);
}

#[test]
fn generic_script_follows_nodes_and_gpus() {
    let env = [("DRY_RUN", "1"), ("NODES", "3"), ("GPUS_PER_NODE", "2"), ("CPUS_PER_TASK", "16")];
    let out = bash("sbatch-generic.sh", &env, None);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let expected = format!(
        "srun --nodes=3 --ntasks-per-node=2 --cpus-per-task=16 --cpu-bind=cores --gpus-per-node=2 \
         --kill-on-bad-exit=1 /opt/sstclim/bin/sstclim {}",
        JOB.replace("/DATA", "/data/sst").replace("BACKEND", "auto")
    );
    assert_eq!(stdout.trim_end(), expected);
    // inside an allocation the shape comes from Slurm; no GPUs: no GPU flag
    let env = [("DRY_RUN", "1"), ("SLURM_JOB_NUM_NODES", "5"), ("SLURM_NTASKS_PER_NODE", "8"), ("GPU_FLAG", "")];
    let stdout = String::from_utf8_lossy(&bash("sbatch-generic.sh", &env, None).stdout).into_owned();
    assert!(
        stdout.starts_with("srun --nodes=5 --ntasks-per-node=8 --cpus-per-task=1 --cpu-bind=cores --kill"),
        "{stdout}"
    );
}

#[test]
fn real_path_hands_srun_the_dry_run_command() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls");
    for tool in ["srun", "module"] {
        let stub = dir.path().join(tool);
        std::fs::write(
            &stub,
            format!("#!/bin/bash\n{{ printf '{tool}'; printf ' %q' \"$@\"; echo; }} >> {}\n", log.display()),
        )
        .unwrap();
        let mut perms = std::fs::metadata(&stub).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&stub, perms).unwrap();
    }
    let dry = bash("sbatch-2x4-dcu.sh", &[("DRY_RUN", "1")], None);
    let dry = String::from_utf8_lossy(&dry.stdout).lines().nth(2).unwrap().trim_end().to_string();
    bash("sbatch-2x4-dcu.sh", &[], Some(dir.path()));
    let calls = std::fs::read_to_string(&log).unwrap();
    let calls: Vec<&str> = calls.lines().collect();
    assert_eq!(calls[0], "module purge");
    assert_eq!(calls[1], "module load compiler/devtoolset/7.3.1 mpi/hpcx/2.11.0/gcc-7.3.1 compiler/dtk/23.04");
    assert_eq!(calls[2], dry);
    assert_eq!(calls.len(), 3);
}
