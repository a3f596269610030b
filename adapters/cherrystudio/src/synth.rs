//! Cherry Studio's synthetic writer: a [`SynthSession`] as the app's pi runtime stores
//! it, pi's session JSONL flat under `<app>/Data/Agents/.pi/sessions/<ISO>_<uuid>.jsonl`,
//! `<app>` being the app-data directory discovery looks in by default on this OS. The
//! lines are the pi lineage's (`deja_core::family::pi_synth`); the runtime's `bash`
//! results carry their exit code in `details.exitCode`, as the app records them.

use std::path::{Path, PathBuf};

use deja_core::family::pi_synth::{self, ExitReport, PiLayout, ProjectDir};
use deja_core::{StoreEnv, SynthSession};

/// The pi runtime's layout; the directory comes from [`super::default_app_dir`].
const LAYOUT: PiLayout = PiLayout { sessions_dir: "", project_dir: ProjectDir::Flat, exit: ExitReport::Details, ..PiLayout::PI };

/// Writes `s` where discovery finds it with only `HOME` set and returns the file.
pub fn write(home: &Path, s: &SynthSession) -> std::io::Result<PathBuf> {
    let env = StoreEnv::with_home(home);
    let sessions = super::INFO
        .store
        .roots_of(super::ID, "pi", &env)
        .into_iter()
        .next()
        .ok_or_else(|| std::io::Error::other("no Cherry Studio store on this OS"))?;
    pi_synth::write_at(&LAYOUT, &sessions, s)
}
