//! Helpers shared by the end-to-end tests: run the built binary, locate fixtures.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The result of one run of the `sweeper` binary.
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs the built `sweeper` binary with `args` (in the crate directory).
pub(crate) fn sweeper<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let out: Output = Command::new(env!("CARGO_BIN_EXE_sweeper"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .output()
        .expect("the sweeper binary runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs the built `sweeper` binary with `args` (in the crate directory), `stdin` piped to it.
pub(crate) fn run_with_stdin<S: AsRef<std::ffi::OsStr>>(args: &[S], stdin: &str) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sweeper"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The built `sweeper` binary with `args`, run in `cwd`, without colour or standard input.
pub(crate) fn sweeper_cmd(args: &[&str], cwd: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sweeper"));
    cmd.args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    cmd
}

/// Runs [`sweeper_cmd`] to its end.
pub(crate) fn sweeper_in(args: &[&str], cwd: &Path) -> Output {
    sweeper_cmd(args, cwd).output().expect("run sweeper")
}

/// Bytes a process wrote, as text.
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A file under `tests/fixtures/`.
pub(crate) fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A file under the repository's `examples/`.
pub(crate) fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

/// Writes `contents` to `name` in a fresh temporary directory.
pub(crate) fn temp_file(name: &str, contents: impl AsRef<[u8]>) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join(name);
    std::fs::write(&path, contents).expect("the file is written");
    (dir, path)
}

/// The copied `AgentX` rows of `Kimi-K2.5` NVFP4 on B200 (22 rows; tp 4 and 8).
pub(crate) const KIMI: &str = "agentx_kimi-k2.5-nvfp4_b200_vllm.csv";

/// A synthetic workload block (built directly, so that tests can also make ones that a
/// config would reject).
#[allow(clippy::unnecessary_wraps)] // the request's field is an Option
pub(crate) fn synthetic(
    isl: u64,
    osl: u64,
    num_request_ratio: f64,
    load: sweeper_goal::Load,
) -> Option<sweeper_goal::Workload> {
    Some(sweeper_goal::Workload::Synthetic {
        isl,
        osl,
        num_request_ratio,
        load,
    })
}

/// The workload most tests send: isl 4000, osl 500, 10 requests per unit of load, and a
/// load the request itself overrides.
pub(crate) fn default_workload() -> Option<sweeper_goal::Workload> {
    synthetic(
        4000,
        500,
        10.0,
        sweeper_goal::Load::KvLoadRange { min: 0.0, max: 1.0 },
    )
}
