//! deja's own files on disk: private directories, private files, and replacing a file
//! without following whatever was planted at a temporary name.
//!
//! The index and the notes hold a user's whole working history (redacted, but still
//! private), so their directories are 0700 and their files 0600 — and a directory that
//! already exists with looser modes (made by an older deja, a `mkdir`, a restored backup)
//! is tightened, not trusted as found. Files are replaced through a temporary file that
//! `tempfile` opens with `O_CREAT | O_EXCL` under a random name: a symlink planted where
//! a fixed temporary name (`manifest.tmp`) would be cannot redirect the write, and the
//! rename replaces the final name itself rather than writing through a link there.

use std::io::Write;
use std::path::Path;

/// Creates `dir` (and its parents) with mode 0700, and tightens `dir` itself to 0700
/// when it already exists with group or other bits. Parents that already exist are
/// left as they are (they are the user's, e.g. `~/.cache`).
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir)?;
    tighten(dir, 0o700)
}

/// Sets `path` to `mode` when its current mode grants group or other anything.
/// A path owned by another user is left alone (chmod would fail, and it is not deja's).
pub fn tighten(path: &Path, mode: u32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let meta = std::fs::metadata(path)?;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if meta.mode() & 0o077 != 0 && meta.uid() == me {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
        }
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
    Ok(())
}

/// Tightens every regular file directly inside `dir` to 0600 (files tantivy wrote with
/// the process umask, or an index made by an older deja). Cheap: one `stat` per file.
pub fn tighten_files(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            tighten(&entry.path(), 0o600)?;
        }
    }
    Ok(())
}

/// Replaces `path` with what `write` produces, atomically: a new 0600 temporary file
/// beside it (exclusive create, random name), synced, then renamed over `path`.
pub fn replace_private(path: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let tmp = tempfile::Builder::new().prefix(".deja-").suffix(".tmp").tempfile_in(dir)?;
    {
        let mut w = std::io::BufWriter::new(tmp.as_file());
        write(&mut w)?;
        w.flush()?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// [`replace_private`] with fixed contents.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_private(path, |w| w.write_all(bytes))
}

/// Opens (creating 0600 if missing) a file deja keeps open, such as the writer lock,
/// refusing to follow a symlink at `path`.
pub fn open_private(path: &Path, options: &mut std::fs::OpenOptions) -> std::io::Result<std::fs::File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    options.open(path)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn an_existing_open_directory_is_tightened() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("index");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        private_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        let fresh = tmp.path().join("a/b");
        private_dir(&fresh).unwrap();
        assert_eq!(mode(&fresh), 0o700);
    }

    #[test]
    fn files_are_tightened_to_owner_only() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("meta.json");
        std::fs::write(&f, "{}").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        tighten_files(tmp.path()).unwrap();
        assert_eq!(mode(&f), 0o600);
    }

    #[test]
    fn a_planted_symlink_is_replaced_not_written_through() {
        let tmp = tempfile::tempdir().unwrap();
        let victim = tmp.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let target = tmp.path().join("manifest");
        // Both the old fixed temporary name and the final name point at the victim.
        std::os::unix::fs::symlink(&victim, tmp.path().join("manifest.tmp")).unwrap();
        std::os::unix::fs::symlink(&victim, &target).unwrap();
        write_private(&target, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        assert!(!std::fs::symlink_metadata(&target).unwrap().file_type().is_symlink());
        assert_eq!(mode(&target), 0o600);
    }

    #[test]
    fn open_private_refuses_a_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        let victim = tmp.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let lock = tmp.path().join("writer.lock");
        std::os::unix::fs::symlink(&victim, &lock).unwrap();
        assert!(open_private(&lock, std::fs::File::options().create(true).truncate(false).write(true)).is_err());
    }
}

/// Bytes of the regular files under `dir`, following no symlinks; what cannot be read
/// counts 0 (a size for a report or a benchmark, not an inventory).
pub fn dir_size(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(t) if t.is_file() => total += e.metadata().map_or(0, |m| m.len()),
                _ => {}
            }
        }
    }
    total
}

/// One field of a tab-separated line deja keeps (the manifest, the archive's ledger of
/// gone sources): tabs, newlines, carriage returns and backslashes are written as `\t`,
/// `\n`, `\r`, `\\`, so a path or an id never splits its line.
pub mod field {
    use std::borrow::Cow;

    /// `s` as a field.
    pub fn escape(s: &str) -> Cow<'_, str> {
        if !s.contains(['\t', '\n', '\r', '\\']) {
            return Cow::Borrowed(s);
        }
        let mut out = String::with_capacity(s.len() + 8);
        for c in s.chars() {
            match c {
                '\t' => out.push_str("\\t"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\\' => out.push_str("\\\\"),
                c => out.push(c),
            }
        }
        Cow::Owned(out)
    }

    /// The text a field written by [`escape`] holds.
    pub fn unescape(s: &str) -> String {
        if !s.contains('\\') {
            return s.to_string();
        }
        let mut out = String::with_capacity(s.len());
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('t') => out.push('\t'),
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        }
        out
    }
}
