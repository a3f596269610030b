//! Resume and handoff: the command that reopens a found session in its own harness, and
//! how a harness is started with a prompt (DESIGN §8, the pages' "Resume" and "Handoff").
//!
//! Each adapter states both as data in its [`HarnessInfo`](crate::HarnessInfo)
//! (`launch`); the matrix's resume and handoff cells are derived from that data, so a
//! cell reads `works` exactly when deja prints the command. A resume command is an argv
//! template (`{id}` is the session id) run in the session's directory when the harness
//! looks sessions up by directory; a harness whose sessions are not all resumable (IDE
//! chats beside CLI chats, sub-agent runs, history-only entries) gives a function that
//! picks per session. Commands are rendered for a POSIX shell with `shlex` quoting: ids
//! and directories come from history, which is untrusted, so every word is quoted.

use std::path::Path;

use crate::model::SessionMeta;

/// How a harness reopens one of its sessions.
#[derive(Debug, Clone, Copy)]
pub enum Resume {
    /// Every session reopens with this command.
    Always(ResumeSpec),
    /// The command depends on the session; `doc` is the template the matrix shows.
    PerSession { doc: &'static str, pick: fn(&SessionMeta) -> Result<ResumeSpec, &'static str> },
    /// The harness reopens a session by a key other than its id (found beside the
    /// transcript); `{id}` in `spec` is replaced by the key.
    ByKey { doc: &'static str, spec: ResumeSpec, key: fn(&SessionMeta) -> Result<String, &'static str> },
    /// The harness has no resume; the reason, for the matrix.
    Unsupported(&'static str),
    /// The material does not say.
    Unknown,
}

/// One resume command: an argv template and where it must run.
#[derive(Debug, Clone, Copy)]
pub struct ResumeSpec {
    /// The words; `{id}` is replaced by the session id, `{path}` by its source file.
    pub argv: &'static [&'static str],
    /// The harness finds the session from its directory: run it there (`cd <dir> && …`).
    pub in_dir: bool,
    /// The command to give instead when the directory is unknown or gone on this
    /// machine (`None`: the same command, without the `cd`, with a note).
    pub elsewhere: Option<&'static [&'static str]>,
    /// What the user should know before running it (it forks, it needs a version, …).
    pub note: Option<&'static str>,
}

impl ResumeSpec {
    /// A command run wherever the user is.
    pub const fn anywhere(argv: &'static [&'static str]) -> ResumeSpec {
        ResumeSpec { argv, in_dir: false, elsewhere: None, note: None }
    }

    /// A command run in the session's directory.
    pub const fn in_dir(argv: &'static [&'static str]) -> ResumeSpec {
        ResumeSpec { argv, in_dir: true, elsewhere: None, note: None }
    }

    pub const fn with_note(self, note: &'static str) -> ResumeSpec {
        ResumeSpec { note: Some(note), ..self }
    }

    pub const fn or_elsewhere(self, argv: &'static [&'static str]) -> ResumeSpec {
        ResumeSpec { elsewhere: Some(argv), ..self }
    }

    /// The template as the docs and the matrix show it: `cd <dir> && claude --resume <id>`.
    pub fn shown(&self) -> String {
        let words = self.argv.join(" ").replace("{id}", "<id>");
        if self.in_dir {
            format!("`cd <dir> && {words}`")
        } else {
            format!("`{words}`")
        }
    }
}

/// How a harness is started with a first prompt (a handoff's digest).
#[derive(Debug, Clone, Copy)]
pub enum Handoff {
    /// deja can start it: the words, `{prompt}` replaced by the digest.
    Exec(&'static [&'static str]),
    /// It cannot be started with a prompt; the digest is printed to paste. The reason.
    Paste(&'static str),
    /// Not a harness an agent runs in; the reason.
    Unsupported(&'static str),
}

/// Resume and handoff together, as an adapter declares them.
#[derive(Debug, Clone, Copy)]
pub struct Launch {
    pub resume: Resume,
    pub handoff: Handoff,
}

impl Launch {
    /// Neither is known: no resume, and a handoff printed to paste.
    pub const UNKNOWN: Launch = Launch { resume: Resume::Unknown, handoff: Handoff::Paste("no start-with-prompt command is known") };
}

/// A resume command made for one session.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ResumeCommand {
    /// The whole line for a POSIX shell, every word quoted.
    pub command: String,
    /// The words, unquoted.
    pub argv: Vec<String>,
    /// The directory it runs in, when it needs one and it exists here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
    /// What the user should know.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The resume command for `session` under `resume`, or why there is none.
pub fn resume_command(resume: &Resume, session: &SessionMeta) -> Result<ResumeCommand, String> {
    let (spec, id) = match resume {
        Resume::Always(spec) => (*spec, session.id.clone()),
        Resume::PerSession { pick, .. } => (pick(session).map_err(str::to_string)?, session.id.clone()),
        Resume::ByKey { spec, key, .. } => (*spec, key(session).map_err(str::to_string)?),
        Resume::Unsupported(why) => return Err((*why).to_string()),
        Resume::Unknown => return Err("no resume command is known for this harness".to_string()),
    };
    if id.is_empty() || id.chars().any(char::is_control) || session.path.chars().any(char::is_control) {
        return Err("the session id cannot be passed to a shell".to_string());
    }
    let fill = |argv: &[&str]| -> Vec<String> { argv.iter().map(|w| w.replace("{id}", &id).replace("{path}", &session.path)).collect() };
    let mut note = spec.note.map(str::to_string);
    let dir = session.project.as_deref().filter(|d| !d.is_empty());
    // Only an absolute directory: a project deja could only decode in part (`auth/api`)
    // must not `cd` into whatever the user's current directory happens to hold.
    let present = dir.filter(|d| Path::new(d).is_absolute() && Path::new(d).is_dir());
    let (argv, dir) = match (spec.in_dir, present, spec.elsewhere) {
        (false, _, _) => (fill(spec.argv), None),
        (true, Some(d), _) => (fill(spec.argv), Some(d.to_string())),
        (true, None, Some(other)) => (fill(other), None),
        (true, None, None) => {
            let gone = match dir {
                Some(d) => format!("the session ran in {d}, which is not on this machine; run it there"),
                None => "the session's directory is unknown; run it where the session ran".to_string(),
            };
            note = Some(note.map_or(gone.clone(), |n| format!("{n}; {gone}")));
            (fill(spec.argv), None)
        }
    };
    let words: Vec<String> = argv.iter().map(|w| quote(w)).collect();
    let command = match &dir {
        Some(d) => format!("cd {} && {}", quote(d), words.join(" ")),
        None => words.join(" "),
    };
    Ok(ResumeCommand { command, argv, dir, note })
}

/// One word for a POSIX shell; plain words stay as they are.
pub fn quote(word: &str) -> String {
    match shlex::try_quote(word) {
        Ok(q) => q.into_owned(),
        // Only a NUL is refused, and history cannot hand one to a shell; drop it.
        Err(_) => shlex::try_quote(&word.replace('\0', "")).map(|q| q.into_owned()).unwrap_or_default(),
    }
}

/// The words that start a harness with `prompt` as its first message.
pub fn handoff_argv(argv: &[&str], prompt: &str) -> Vec<String> {
    argv.iter().map(|w| if *w == "{prompt}" { prompt.to_string() } else { w.to_string() }).collect()
}

/// The file a session was read from: its source path without the `#<row key>` a
/// multi-session container (a database, a shared history file) adds.
pub fn source_file(session: &SessionMeta) -> &str {
    match session.path.rsplit_once('#') {
        Some((file, key)) if !key.contains(['/', '\\']) => file,
        _ => &session.path,
    }
}

/// A sub-agent run has no transcript of its own to reopen: resume its parent.
pub fn not_a_subagent(session: &SessionMeta) -> Result<(), &'static str> {
    if session.parent.is_some() {
        Err("a sub-agent run is not resumable on its own; resume its parent session")
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(id: &str, project: Option<&str>) -> SessionMeta {
        SessionMeta {
            harness: "h".into(),
            id: id.into(),
            title: None,
            project: project.map(str::to_string),
            path: "/x".into(),
            started: None,
            updated: None,
            parent: None,
            kind: None,
            agent: None,
            machine: None,
            turns: 1,
            source_deleted: None,
        }
    }

    const IN_DIR: Resume = Resume::Always(ResumeSpec::in_dir(&["tool", "--resume", "{id}"]));

    #[test]
    fn runs_in_the_sessions_directory_when_it_exists() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("my app");
        std::fs::create_dir(&d).unwrap();
        let r = resume_command(&IN_DIR, &meta("abc-1", d.to_str())).unwrap();
        assert_eq!(r.command, format!("cd '{}' && tool --resume abc-1", d.display()));
        assert_eq!(r.argv, ["tool", "--resume", "abc-1"]);
        assert!(r.note.is_none());
    }

    #[test]
    fn a_gone_directory_is_said_and_the_elsewhere_form_used_when_there_is_one() {
        let r = resume_command(&IN_DIR, &meta("abc", Some("/nonexistent/dir"))).unwrap();
        assert_eq!(r.command, "tool --resume abc");
        assert!(r.note.unwrap().contains("/nonexistent/dir"));
        let other = Resume::Always(ResumeSpec::in_dir(&["cmd", "--resume", "{id}"]).or_elsewhere(&["cmd", "--session", "{id}"]));
        assert_eq!(resume_command(&other, &meta("abc", None)).unwrap().command, "cmd --session abc");
    }

    #[test]
    fn a_relative_project_is_never_a_directory_to_cd_into() {
        let here = std::env::current_dir().unwrap();
        let rel = here.file_name().map(|n| format!("../{}", n.to_string_lossy())).unwrap();
        let r = resume_command(&IN_DIR, &meta("abc", Some(&rel))).unwrap();
        assert_eq!(r.command, "tool --resume abc");
        assert!(r.dir.is_none() && r.note.is_some());
    }

    #[test]
    fn hostile_ids_are_quoted_or_refused() {
        let anywhere = Resume::Always(ResumeSpec::anywhere(&["other", "resume", "{id}"]));
        assert_eq!(resume_command(&anywhere, &meta("a; rm -rf ~", None)).unwrap().command, "other resume 'a; rm -rf ~'");
        assert!(resume_command(&anywhere, &meta("a\nb", None)).is_err());
        assert!(resume_command(&anywhere, &meta("", None)).is_err());
    }

    #[test]
    fn the_source_file_drops_a_row_key() {
        let mut m = meta("s1", None);
        m.path = "/h/.local/share/kilo/kilo.db#ses_1".into();
        assert_eq!(source_file(&m), "/h/.local/share/kilo/kilo.db");
        m.path = "/h/odd#dir/sessions/a.jsonl".into();
        assert_eq!(source_file(&m), "/h/odd#dir/sessions/a.jsonl");
    }

    #[test]
    fn handoff_puts_the_prompt_in_its_place() {
        assert_eq!(handoff_argv(&["tool", "-i", "{prompt}"], "go on"), ["tool", "-i", "go on"]);
    }
}
