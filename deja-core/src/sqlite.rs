//! Reading a harness's live SQLite database without touching it.
//!
//! Guarantees of [`Snapshot::open`]:
//!
//! * **The WAL is seen.** Right after a run most rows of a WAL-mode store sit in the
//!   `-wal` file, not the main file (README "SQLite reading"), so the WAL is always
//!   read with the database. The main file is never copied or opened alone, and
//!   `immutable=1` (which ignores the WAL) is never used.
//! * **Not a byte and not an mtime of the harness's files changes.** A read-only open of
//!   the live file (`mode=ro`) still writes read marks into the `-shm`, and a write
//!   connection could checkpoint. So the reader *copies* `db`, `-wal` and a hot
//!   `-journal` into a private temporary directory (0700) and opens the copy; SQLite
//!   rebuilds the wal-index from the copied WAL, and whatever it writes lands in the copy.
//!   The `-shm` is never copied or opened: it is only an index of the WAL. `std::fs::copy`
//!   uses `copy_file_range`/reflinks where the filesystem supports them, so a copy of a
//!   store of several GB is cheap on btrfs/XFS and in-kernel elsewhere.
//! * **The copy is consistent while the harness writes.** Before copying, the size and
//!   mtime of `db`, `-wal` and `-journal`, the db header's change counter and the WAL
//!   header (its first 32 bytes: salts and checkpoint sequence) are recorded; after
//!   copying they are checked again. A changed db (a checkpoint or a rollback-journal
//!   commit) or a changed WAL header (a WAL reset) means the copy may mix two states,
//!   and the copy is retried with a short backoff; after [`ATTEMPTS`] tries the open
//!   fails with an [`std::io::ErrorKind::ResourceBusy`] error naming the database. A WAL
//!   that merely grew during the copy is fine: SQLite ignores a torn or uncommitted tail
//!   of frames (each frame is checksummed against the header's salts). The content
//!   checks (change counter, WAL header) do not depend on mtime granularity.
//! * **Never creates a file.** A missing path is an I/O error, a zero-byte or
//!   non-regular one is [`FormatError::Corrupt`]; neither is opened (the `sqlite3` CLI
//!   would create it). A file that is not a database is `Corrupt`, never a panic.
//! * The copy is opened with `PRAGMA query_only=1` and without a checkpoint on close.
//!
//! [`memoized`] keeps what a query read from a side database until the database changes,
//! so a lookup many sources (or every refresh's discovery) make costs one copy.
//!
//! Column helpers read TEXT-or-BLOB columns (some stores keep JSON as a BLOB, some
//! zstd-compressed) through [`decode_blob`], which bounds decompression so a bomb is an
//! error rather than an out-of-memory kill.

use std::any::Any;
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, SystemTime};

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, Row};
use serde_json::Value;

use crate::format::FormatError;
use crate::time::Timestamp;

/// How often a copy is retried when the harness checkpoints or resets its WAL meanwhile.
pub const ATTEMPTS: usize = 5;
/// Backoff before each retry (20 ms growing to 300 ms; about 0.75 s in all).
const BACKOFF_MS: [u64; ATTEMPTS - 1] = [20, 60, 150, 300];

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// A private, consistent copy of a database and its WAL, opened read-only in effect.
/// The copy is deleted when the snapshot is dropped.
pub struct Snapshot {
    // Declared before `_dir` so the connection closes before its directory is removed.
    conn: Connection,
    _dir: tempfile::TempDir,
    /// Bytes copied (database plus WAL plus journal).
    pub bytes: u64,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot").field("dir", &self._dir.path()).field("bytes", &self.bytes).finish()
    }
}

impl Snapshot {
    /// Copies `db` with its `-wal` (and a hot `-journal`) into a private temporary
    /// directory and opens the copy. See the module doc for what is guaranteed.
    pub fn open(db: &Path) -> Result<Snapshot, FormatError> {
        Self::open_in(db, &std::env::temp_dir())
    }

    /// [`open`](Self::open) with the private copy made under `temp_parent`: a directory
    /// on the store's filesystem (deja's cache directory) lets `std::fs::copy` reflink a
    /// store of several GB instead of copying its bytes into the system temp dir.
    pub fn open_in(db: &Path, temp_parent: &Path) -> Result<Snapshot, FormatError> {
        let meta = std::fs::metadata(db).map_err(|e| FormatError::io(db, e))?;
        if !meta.is_file() {
            return Err(FormatError::corrupt(db, "not a regular file; not opened as a database"));
        }
        if meta.len() == 0 {
            return Err(FormatError::corrupt(db, "zero-byte file; not opened as a database"));
        }
        // SQLite resolves a symlinked database and keeps its `-wal` beside the target.
        let real = resolve(db);
        for attempt in 0..ATTEMPTS {
            if attempt > 0 {
                std::thread::sleep(Duration::from_millis(BACKOFF_MS[attempt - 1]));
            }
            if let Some(snapshot) = Self::try_copy(db, &real, temp_parent)? {
                return Ok(snapshot);
            }
            #[cfg(test)]
            tests::RETRIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        Err(FormatError::io(
            db,
            std::io::Error::new(
                std::io::ErrorKind::ResourceBusy,
                format!("database busy: it was checkpointed or its WAL reset during each of {ATTEMPTS} copy attempts; try again"),
            ),
        ))
    }

    /// One copy attempt: `Ok(None)` when the files changed under the copy.
    /// `db` names the database in errors; `real` is where it is (symlinks resolved).
    fn try_copy(db: &Path, real: &Path, temp_parent: &Path) -> Result<Option<Snapshot>, FormatError> {
        let before = Fingerprint::take(real)?;
        let dir = private_temp_dir(temp_parent).map_err(|e| FormatError::io(temp_parent, e))?;
        let copy = dir.path().join("db");
        let mut bytes = copy_private(real, &copy)?;
        let wal = wal_path(real);
        if before.wal.is_some() {
            match copy_private(&wal, &with_suffix(&copy, "-wal")) {
                Ok(n) => bytes += n,
                // Deleted by the last connection closing (after a full checkpoint): the db
                // changed too, and the re-check below sees it.
                Err(FormatError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        let journal = journal_path(real);
        if before.journal.is_some_and(|(len, _)| len > 0) {
            match copy_private(&journal, &with_suffix(&copy, "-journal")) {
                Ok(n) => bytes += n,
                Err(FormatError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        let after = Fingerprint::take(real)?;
        let copied_wal_header = wal_header(&with_suffix(&copy, "-wal"));
        if !before.same_state(&after) || copied_wal_header != before.wal.as_ref().map(|w| w.header.clone()) {
            return Ok(None);
        }
        let conn = open_copy(db, &copy)?;
        Ok(Some(Snapshot { conn, _dir: dir, bytes }))
    }

    /// The connection to the copy.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }
}

/// What is compared before and after a copy to see whether the harness changed the
/// database meanwhile.
#[derive(Debug, PartialEq)]
struct Fingerprint {
    db: (u64, Option<SystemTime>),
    /// Bytes 24..28 of the db header: the file change counter, bumped by every
    /// rollback-journal commit and by checkpoints.
    db_counter: Vec<u8>,
    wal: Option<WalState>,
    journal: Option<(u64, Option<SystemTime>)>,
}

#[derive(Debug, PartialEq)]
struct WalState {
    len: u64,
    header: Vec<u8>,
}

impl Fingerprint {
    fn take(db: &Path) -> Result<Fingerprint, FormatError> {
        let meta = std::fs::metadata(db).map_err(|e| FormatError::io(db, e))?;
        let db_counter = read_prefix(db, 28).map(|h| h.get(24..28).map(<[u8]>::to_vec).unwrap_or_default()).unwrap_or_default();
        let wal = wal_path(db);
        let wal = std::fs::metadata(&wal).ok().map(|m| WalState { len: m.len(), header: wal_header(&wal).unwrap_or_default() });
        let journal = std::fs::metadata(journal_path(db)).ok().map(|m| (m.len(), m.modified().ok()));
        Ok(Fingerprint { db: (meta.len(), meta.modified().ok()), db_counter, wal, journal })
    }

    /// True when a copy taken between `self` and `later` is consistent: the db and the
    /// journal are untouched and the WAL was at most appended to.
    fn same_state(&self, later: &Fingerprint) -> bool {
        let wal_ok = match (&self.wal, &later.wal) {
            (None, None) => true,
            (Some(a), Some(b)) => a.header == b.header && b.len >= a.len,
            _ => false,
        };
        self.db == later.db && self.db_counter == later.db_counter && self.journal == later.journal && wal_ok
    }
}

/// The WAL header (32 bytes: magic, version, page size, checkpoint sequence, salts,
/// checksum) or as much of it as exists; a new header means the WAL was reset.
fn wal_header(wal: &Path) -> Option<Vec<u8>> {
    read_prefix(wal, 32).ok()
}

fn read_prefix(path: &Path, n: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(n as usize);
    std::fs::File::open(path)?.take(n).read_to_end(&mut buf)?;
    Ok(buf)
}

fn private_temp_dir(parent: &Path) -> std::io::Result<tempfile::TempDir> {
    let mut builder = tempfile::Builder::new();
    builder.prefix("deja-sqlite-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    builder.tempdir_in(parent)
}

/// Copies `from` to `to` and makes the copy writable by us alone (`fs::copy` keeps the
/// source's mode, and SQLite needs to write the copy's wal-index and roll back a journal).
fn copy_private(from: &Path, to: &Path) -> Result<u64, FormatError> {
    let n = std::fs::copy(from, to).map_err(|e| FormatError::io(from, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o600)).map_err(|e| FormatError::io(to, e))?;
    }
    #[cfg(not(unix))]
    {
        let mut perms = std::fs::metadata(to).map_err(|e| FormatError::io(to, e))?.permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perms.set_readonly(false);
        std::fs::set_permissions(to, perms).map_err(|e| FormatError::io(to, e))?;
    }
    Ok(n)
}

/// Opens the private copy and proves it is a database; errors name the original `db`.
fn open_copy(db: &Path, copy: &Path) -> Result<Connection, FormatError> {
    let corrupt = |e: rusqlite::Error| FormatError::corrupt(db, format!("not a readable SQLite database: {e}"));
    // Read-write on the copy so a hot journal can be rolled back and the wal-index built;
    // `query_only` then refuses any write, and no checkpoint runs on close.
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(copy, flags).map_err(corrupt)?;
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true).map_err(corrupt)?;
    conn.pragma_update(None, "query_only", 1).map_err(corrupt)?;
    // Opening is lazy: the first read of the schema is what fails on garbage.
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0)).map_err(corrupt)?;
    Ok(conn)
}

fn with_suffix(db: &Path, suffix: &str) -> PathBuf {
    let mut s = db.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

/// `<db>-wal`.
pub fn wal_path(db: &Path) -> PathBuf {
    with_suffix(db, "-wal")
}

/// `<db>-shm`.
pub fn shm_path(db: &Path) -> PathBuf {
    with_suffix(db, "-shm")
}

/// `<db>-journal`.
pub fn journal_path(db: &Path) -> PathBuf {
    with_suffix(db, "-journal")
}

/// `db` as a source, with its [`parts`] (the `-wal` a live store's new rows sit in).
pub fn database_source(db: &Path) -> crate::model::SourceRef {
    crate::store::database_source(db)
}

/// Looks at `db` (reported as a store root) and, when it is a non-empty regular file,
/// adds it as a source with its parts (see [`crate::store::add_database`]).
pub fn discover_database(found: &mut crate::format::Discovery, db: &Path) -> bool {
    crate::store::add_database(found, db)
}

/// The files besides `db` whose change must change the source's fingerprint (for
/// [`crate::model::SourceRef::with_part`]): the `-wal`, where a live store's new rows are.
pub fn parts(db: &Path) -> Vec<PathBuf> {
    crate::store::database_parts(db)
}

/// `db` with symlinks resolved (as SQLite does to place the `-wal`), or as given when
/// that fails.
fn resolve(db: &Path) -> PathBuf {
    std::fs::canonicalize(db).unwrap_or_else(|_| db.to_path_buf())
}

/// What [`memoized`] keeps: per database and query, the database's fingerprint when read
/// and the answer, or why there was none.
type Memo = HashMap<(PathBuf, &'static str), (u64, Result<Arc<dyn Any + Send + Sync>, String>)>;

static MEMO: LazyLock<Mutex<Memo>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// Answers [`memoized`] keeps at most; past it the memo starts afresh (a process reads a
/// handful of side databases; tests make many).
const MEMO_ENTRIES: usize = 64;

/// `read`'s answer from `db`, computed on a [`Snapshot`] only when `db`, its `-wal` or a
/// hot journal changed (size or mtime) since this process last asked for `what` there.
/// Discovery that consults a database on every refresh, and the sources of a run that
/// each look something up in the same side database, then share one copy and one query
/// (and a watcher, one per change). `what` names the query (its SQL will do). A failure
/// is kept too, so a side database that cannot be read is not copied again for every
/// source until it changes.
pub fn memoized<T: Send + Sync + 'static>(
    db: &Path,
    what: &'static str,
    read: impl FnOnce(&Connection) -> rusqlite::Result<T>,
) -> Result<Arc<T>, FormatError> {
    let real = resolve(db);
    let fingerprint = crate::stamp::parts_fingerprint(&[real.clone(), wal_path(&real), journal_path(&real)]);
    let key = (db.to_path_buf(), what);
    let failed = |why: &str| FormatError::corrupt(db, why.to_string());
    // Held while reading, so parsers asking at once copy the database once.
    let mut memo = MEMO.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, kept)) = memo.get(&key).filter(|(fp, _)| *fp == fingerprint) {
        match kept {
            Ok(answer) => {
                if let Ok(answer) = Arc::clone(answer).downcast::<T>() {
                    return Ok(answer);
                }
            }
            Err(why) => return Err(failed(why)),
        }
    }
    let answer = Snapshot::open(db)
        .map_err(|e| e.to_string())
        .and_then(|snapshot| read(snapshot.conn()).map_err(|e| format!("query failed (schema changed?): {e}")));
    if memo.len() >= MEMO_ENTRIES {
        memo.clear();
    }
    match answer {
        Ok(answer) => {
            let answer = Arc::new(answer);
            memo.insert(key, (fingerprint, Ok(Arc::clone(&answer) as Arc<dyn Any + Send + Sync>)));
            Ok(answer)
        }
        Err(why) => {
            memo.insert(key, (fingerprint, Err(why.clone())));
            Err(failed(&why))
        }
    }
}

/// Why a BLOB could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    #[error("compressed value: {0}")]
    TooLarge(#[from] crate::read::TooLarge),
    #[error("zstd: {0}")]
    Zstd(#[from] std::io::Error),
}

/// A BLOB's bytes: decompressed when it starts with the zstd magic, as is otherwise.
/// Decompression stops with [`BlobError::TooLarge`] past the process's
/// [`DecodeLimit::value`](crate::read::DecodeLimit::value) (the limit whole sources
/// have, with a value's smaller allowance).
pub fn decode_blob(bytes: &[u8]) -> Result<Cow<'_, [u8]>, BlobError> {
    decode_blob_limited(bytes, &crate::read::DecodeLimit::value())
}

/// [`decode_blob`] with an explicit limit.
pub fn decode_blob_limited<'a>(bytes: &'a [u8], limit: &crate::read::DecodeLimit) -> Result<Cow<'a, [u8]>, BlobError> {
    if !bytes.starts_with(&ZSTD_MAGIC) {
        return Ok(Cow::Borrowed(bytes));
    }
    let (out, err) = crate::read::decode_zstd_frames_limited(bytes, limit)?;
    match err {
        Some(e) => Err(BlobError::Zstd(e)),
        None => Ok(Cow::Owned(out)),
    }
}

/// Why a column could not be read as text or JSON.
#[derive(Debug, thiserror::Error)]
pub enum ColumnError {
    #[error("{0}")]
    Blob(#[from] BlobError),
    #[error("invalid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("{0}")]
    Sql(#[from] rusqlite::Error),
}

/// A TEXT or BLOB (possibly zstd) value as a string (invalid UTF-8 replaced); numbers
/// as their decimal form; NULL as `None`.
pub fn value_text(v: ValueRef<'_>) -> Result<Option<String>, BlobError> {
    Ok(match v {
        ValueRef::Null => None,
        ValueRef::Integer(n) => Some(n.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
        ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Some(String::from_utf8_lossy(&decode_blob(b)?).into_owned()),
    })
}

/// Column `idx` of `row` as text (see [`value_text`]).
pub fn column_text(row: &Row<'_>, idx: usize) -> Result<Option<String>, ColumnError> {
    Ok(value_text(row.get_ref(idx)?)?)
}

/// Column `idx` of `row` parsed as JSON from TEXT or BLOB (possibly zstd); NULL and
/// blank as `None`. A bare number is returned as a JSON number.
pub fn column_json(row: &Row<'_>, idx: usize) -> Result<Option<Value>, ColumnError> {
    let bytes: Cow<'_, [u8]> = match row.get_ref(idx)? {
        ValueRef::Null => return Ok(None),
        ValueRef::Integer(n) => return Ok(Some(Value::from(n))),
        ValueRef::Real(f) => return Ok(serde_json::Number::from_f64(f).map(Value::Number)),
        ValueRef::Text(t) => Cow::Borrowed(t),
        ValueRef::Blob(b) => decode_blob(b)?,
    };
    let trimmed = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes).trim_ascii();
    if trimmed.is_empty() {
        return Ok(None);
    }
    Ok(Some(serde_json::from_slice(trimmed)?))
}

/// An integer from an INTEGER, REAL or numeric TEXT value (column types are loose).
pub fn value_i64(v: ValueRef<'_>) -> Option<i64> {
    match v {
        ValueRef::Integer(n) => Some(n),
        ValueRef::Real(f) if f.is_finite() => Some(f as i64),
        ValueRef::Text(t) => std::str::from_utf8(t).ok()?.trim().parse::<f64>().ok().filter(|f| f.is_finite()).map(|f| f as i64),
        _ => None,
    }
}

/// A timestamp from a number (ms above 1e12, else seconds) or any string shape
/// [`Timestamp::parse_str`] accepts; zero and garbage are `None`.
pub fn value_timestamp(v: ValueRef<'_>) -> Option<Timestamp> {
    match v {
        ValueRef::Integer(n) => Timestamp::from_number(n as f64),
        ValueRef::Real(f) => Timestamp::from_number(f),
        ValueRef::Text(t) => Timestamp::parse_str(std::str::from_utf8(t).ok()?),
        _ => None,
    }
}

/// The column names of `table` (`PRAGMA table_info`), empty when there is no such
/// table: older schema versions lack columns newer ones have.
pub fn table_columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT name FROM pragma_table_info(?1)")?;
    let names = stmt.query_map([table], |r| r.get::<_, String>(0))?.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(names)
}

/// The highest `rowid` of `table`. A row inserted since has a higher one, whatever time
/// it carries, which makes it a row cursor that needs no trust in a harness's clocks.
/// `Ok(None)` for an empty table; an error for a table without rowids (`WITHOUT ROWID`).
pub fn max_rowid(conn: &Connection, table: &str) -> rusqlite::Result<Option<i64>> {
    conn.query_row(&format!("SELECT max(rowid) FROM \"{table}\""), [], |r| r.get(0))
}

/// The distinct `key` values of the rows of `table` inserted after the rowid `mark`
/// (the sessions a row cursor must re-read), each rendered by `render`; values it
/// cannot render are passed over.
pub fn keys_after(
    conn: &Connection,
    table: &str,
    key: &str,
    mark: i64,
    mut render: impl FnMut(ValueRef<'_>) -> Option<String>,
) -> rusqlite::Result<std::collections::HashSet<String>> {
    let mut stmt = conn.prepare(&format!("SELECT DISTINCT \"{key}\" FROM \"{table}\" WHERE rowid > ?1"))?;
    let mut rows = stmt.query([mark])?;
    let mut out = std::collections::HashSet::new();
    while let Some(row) = rows.next()? {
        if let Some(k) = render(row.get_ref(0)?) {
            out.insert(k);
        }
    }
    Ok(out)
}

/// A column value as text, for [`keys_after`] (`None` for NULL and undecodable BLOBs).
pub fn key_text(v: ValueRef<'_>) -> Option<String> {
    value_text(v).ok().flatten()
}

/// A source's database opened for a parse: the snapshot, the parse's stats begun with
/// its bytes, and the one way a query error becomes the source's [`FormatError`]. The
/// preamble every `parse_db` shares.
pub struct Db {
    snapshot: Snapshot,
    path: PathBuf,
}

impl Db {
    /// Opens `src`'s database through a [`Snapshot`]; the stats count its bytes read.
    pub fn open(src: &crate::model::SourceRef) -> Result<(Db, crate::format::ParseStats), FormatError> {
        let snapshot = Snapshot::open(&src.path)?;
        let stats = crate::format::ParseStats { bytes_read: snapshot.bytes, ..Default::default() };
        Ok((Db { snapshot, path: src.path.clone() }, stats))
    }

    pub fn conn(&self) -> &Connection {
        self.snapshot.conn()
    }

    /// A query that failed, as the source's error: the schema is not the one expected.
    pub fn err(&self, e: rusqlite::Error) -> FormatError {
        FormatError::corrupt(&self.path, format!("query failed (schema changed?): {e}"))
    }

    /// The columns of `table`; the database is refused as not `what` (`"a Warp store"`)
    /// when one of `required` is missing.
    pub fn columns(&self, table: &str, required: &[&str], what: &str) -> Result<Columns, FormatError> {
        let cols: std::collections::HashSet<String> = table_columns(self.conn(), table).map_err(|e| self.err(e))?.into_iter().collect();
        let missing: Vec<&str> = required.iter().copied().filter(|c| !cols.contains(*c)).collect();
        if !missing.is_empty() {
            return Err(FormatError::corrupt(&self.path, format!("not {what} ({table} lacks {}); schema changed?", missing.join(", "))));
        }
        Ok(Columns(cols))
    }
}

/// The columns a table has, for queries that tolerate older schemas.
#[derive(Debug, Clone, Default)]
pub struct Columns(std::collections::HashSet<String>);

impl Columns {
    pub fn has(&self, name: &str) -> bool {
        self.0.contains(name)
    }

    /// `"name"` when the table has the column, else `NULL`: a select list that reads an
    /// older schema the same way.
    pub fn col(&self, name: &str) -> String {
        self.qualified("", name)
    }

    /// [`col`](Self::col) with a table alias (`m."name"`).
    pub fn qualified(&self, alias: &str, name: &str) -> String {
        match (self.has(name), alias) {
            (false, _) => "NULL".to_string(),
            (true, "") => format!("\"{name}\""),
            (true, a) => format!("{a}.\"{name}\""),
        }
    }
}

/// How far before a row cursor's newest time sessions are still looked at: stored times
/// may have whole-second precision, and a row committed late can carry an earlier time.
pub const CURSOR_SLACK_MS: i64 = 30_000;

/// What a [`RowCursor`] remembers of one session: its newest update time (ms) and two
/// counters that change whenever its rows do (row count, payload bytes; `0` when a store
/// has only one). Equal states mean an unchanged session.
pub type SessionState = (Option<i64>, i64, i64);

/// The row cursor of a multi-session database, the one every adapter of such a store
/// uses: its sessions carry an update time, its rows a growing mark (a rowid or a
/// numeric id), or both. It holds the newest update time, the highest mark, and the
/// exact state of the sessions touched within [`CURSOR_SLACK_MS`] of that time. Given
/// it back, a reader re-reads only the sessions with a row past the mark (the caller's
/// query, [`keys_after`]) or touched since the newest time minus the slack and not
/// exactly as recorded ([`RowCursor::touched_since`]), so a session updated in the same
/// second as the last read is neither missed nor re-read when unchanged. A store
/// without times passes no states (only the mark counts); one without a mark passes
/// `Some(0)` (only the times count).
///
/// As text: `{"newest": ms, "rowid": n, "recent": [[id, ms, a, b], …]}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowCursor {
    pub newest: i64,
    pub mark: i64,
    pub recent: Vec<(String, SessionState)>,
}

impl RowCursor {
    /// At most this many sessions are remembered exactly (more only costs a re-read).
    pub const MAX_RECENT: usize = 64;

    /// Reads the text [`RowCursor::to_text`] wrote, and the cursors adapters wrote before
    /// they shared this one, so an index built then is not read again whole: the mark
    /// under its older names (`message_id`, `max_id`, `max_rowid`), a cursor with only a
    /// mark or only times, and three-element entries (read with `b = 0`).
    pub fn parse(text: &str) -> Option<RowCursor> {
        let v: Value = serde_json::from_str(text).ok()?;
        let recent = v
            .get("recent")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|r| {
                let b = r.get(3).and_then(Value::as_i64).unwrap_or(0);
                Some((r.get(0)?.as_str()?.to_string(), (r.get(1)?.as_i64(), r.get(2)?.as_i64()?, b)))
            })
            .collect();
        let mark = ["rowid", "message_id", "max_id", "max_rowid"].iter().find_map(|k| v.get(*k)?.as_i64());
        let newest = v.get("newest").and_then(Value::as_i64);
        if mark.is_none() && newest.is_none() {
            return None;
        }
        Some(RowCursor { newest: newest.unwrap_or(0), mark: mark.unwrap_or(0), recent })
    }

    pub fn to_text(&self) -> String {
        let recent: Vec<Value> = self.recent.iter().map(|(id, (t, a, b))| serde_json::json!([id, t, a, b])).collect();
        serde_json::json!({"newest": self.newest, "rowid": self.mark, "recent": recent}).to_string()
    }

    /// The cursor the previous read returned, when it fits this database: one from the
    /// future or past the highest mark was taken from another database (a restored
    /// backup, a replaced file), and everything is read. `newest` is the newest update
    /// time now (`None` for a store without times), `max_mark` the highest mark.
    pub fn previous(
        stats: &mut crate::format::ParseStats,
        src: &crate::model::SourceRef,
        newest: Option<i64>,
        max_mark: Option<i64>,
    ) -> Option<RowCursor> {
        stats.previous_cursor(src, RowCursor::parse).filter(|c| newest.unwrap_or(0) >= c.newest && max_mark.is_some_and(|m| m >= c.mark))
    }

    /// The sessions to re-read given the previous cursor (`None`: read everything): those
    /// [`touched_since`](Self::touched_since) it, and those owning a row of `table` past
    /// its mark (keyed by `key`, rendered by [`key_text`]).
    pub fn wanted(
        previous: Option<&RowCursor>,
        conn: &Connection,
        states: &HashMap<String, SessionState>,
        table: &str,
        key: &str,
    ) -> rusqlite::Result<Option<std::collections::HashSet<String>>> {
        let Some(c) = previous else { return Ok(None) };
        let mut wanted = c.touched_since(states);
        wanted.extend(keys_after(conn, table, key, c.mark, key_text)?);
        Ok(Some(wanted))
    }

    /// The sessions touched since this cursor (its newest time minus the slack; a session
    /// with no time counts as touched) whose state is not the one recorded. Sessions with
    /// rows past [`mark`](Self::mark) are the caller's to add.
    pub fn touched_since(&self, states: &std::collections::HashMap<String, SessionState>) -> std::collections::HashSet<String> {
        let since = self.newest.saturating_sub(CURSOR_SLACK_MS);
        let recent: std::collections::HashMap<&str, SessionState> = self.recent.iter().map(|(id, s)| (id.as_str(), *s)).collect();
        states
            .iter()
            .filter(|(id, s)| s.0.is_none_or(|t| t >= since) && recent.get(id.as_str()) != Some(*s))
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// The cursor after a read of a database in these states, as text for
    /// `ParseStats::cursor`; `None` when it has no mark yet (an empty table).
    pub fn after(states: &std::collections::HashMap<String, SessionState>, max_mark: Option<i64>) -> Option<String> {
        let mark = max_mark?;
        // A store without times keeps only its mark.
        let newest = states.values().filter_map(|s| s.0).max().unwrap_or(0);
        let window = newest.saturating_sub(CURSOR_SLACK_MS);
        let mut recent: Vec<(String, SessionState)> =
            states.iter().filter(|(_, s)| s.0.is_some_and(|t| t >= window)).map(|(id, s)| (id.clone(), *s)).collect();
        recent.sort();
        recent.truncate(Self::MAX_RECENT);
        Some(RowCursor { newest, mark, recent }.to_text())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    #[test]
    fn rowid_marks_find_the_rows_inserted_since() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE m(sid TEXT); INSERT INTO m VALUES ('a'), ('b');").unwrap();
        assert_eq!(max_rowid(&conn, "m").unwrap(), Some(2));
        conn.execute_batch("INSERT INTO m VALUES ('b'), (NULL); DELETE FROM m WHERE rowid = 1; INSERT INTO m VALUES ('a');").unwrap();
        let mut after: Vec<String> = keys_after(&conn, "m", "sid", 2, key_text).unwrap().into_iter().collect();
        after.sort();
        assert_eq!(after, ["a", "b"], "a deleted and re-inserted row is new; NULL keys are passed over");
        conn.execute_batch("CREATE TABLE e(x); CREATE TABLE w(k TEXT PRIMARY KEY) WITHOUT ROWID;").unwrap();
        assert_eq!(max_rowid(&conn, "e").unwrap(), None);
        assert!(max_rowid(&conn, "w").is_err());
    }

    #[test]
    fn a_memoized_answer_is_read_again_only_when_the_database_changed() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("side.db");
        let w = live_writer(&db);
        w.execute_batch("CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('a');").unwrap();
        let reads = std::sync::atomic::AtomicUsize::new(0);
        let count = || {
            memoized(&db, "SELECT count(*) FROM t", |c| {
                reads.fetch_add(1, Ordering::SeqCst);
                c.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))
            })
            .map(|n| *n)
        };
        assert_eq!((count().unwrap(), count().unwrap()), (1, 1));
        assert_eq!(reads.load(Ordering::SeqCst), 1, "unchanged: one copy, one query");
        w.execute("INSERT INTO t VALUES ('b')", []).unwrap();
        assert_eq!(count().unwrap(), 2, "a row in the WAL is a change");
        assert_eq!(reads.load(Ordering::SeqCst), 2);
        let other = memoized(&db, "another query", |_| Ok("x".to_string())).unwrap();
        assert_eq!(other.as_str(), "x", "each query is kept apart");
        assert!(memoized(&dir.path().join("missing.db"), "q", |_| Ok(0)).is_err());
        let tries = std::sync::atomic::AtomicUsize::new(0);
        let broken = || {
            memoized(&db, "SELECT nothing FROM nowhere", |c| {
                tries.fetch_add(1, Ordering::SeqCst);
                c.query_row("SELECT nothing FROM nowhere", [], |r| r.get::<_, i64>(0))
            })
        };
        assert!(broken().is_err() && broken().is_err());
        assert_eq!(tries.load(Ordering::SeqCst), 1, "a failure is kept until the database changes");
        drop(w);
    }

    /// Copies thrown away because the files changed under them (seen by the tests).
    pub(super) static RETRIES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    /// A writer on the "harness's" database, the way a harness holds it: WAL mode, no
    /// automatic checkpoint, connection kept open.
    fn live_writer(db: &Path) -> Connection {
        let w = Connection::open(db).unwrap();
        w.pragma_update(None, "journal_mode", "WAL").unwrap();
        w.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
        w
    }

    fn file_state(p: &Path) -> Option<(u64, SystemTime, u64)> {
        let m = std::fs::metadata(p).ok()?;
        let bytes = std::fs::read(p).ok()?;
        Some((m.len(), m.modified().unwrap(), xxhash_rust::xxh3::xxh3_64(&bytes)))
    }

    #[test]
    fn wal_rows_are_read_and_the_harness_files_stay_byte_and_mtime_identical() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("store.db");
        let w = live_writer(&db);
        w.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);").unwrap();
        // Everything so far into the main file, then rows that exist only in the WAL.
        w.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).unwrap();
        for i in 0..200 {
            w.execute("INSERT INTO t(v) VALUES (?1)", [format!("row {i}")]).unwrap();
        }
        assert!(std::fs::metadata(wal_path(&db)).unwrap().len() > 0, "rows sit in the WAL");
        let before: Vec<_> = [db.clone(), wal_path(&db), shm_path(&db)].iter().map(|p| file_state(p)).collect();
        assert!(before.iter().all(Option::is_some));
        std::thread::sleep(Duration::from_millis(20));

        let snap = Snapshot::open(&db).unwrap();
        let n: i64 = snap.conn().query_row("SELECT count(*) FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 200);
        let last: String = snap.conn().query_row("SELECT v FROM t ORDER BY id DESC LIMIT 1", [], |r| r.get(0)).unwrap();
        assert_eq!(last, "row 199");
        assert!(snap.bytes > 0);
        assert!(snap.conn().execute("INSERT INTO t(v) VALUES ('x')", []).is_err(), "query_only");
        drop(snap);

        let after: Vec<_> = [db.clone(), wal_path(&db), shm_path(&db)].iter().map(|p| file_state(p)).collect();
        assert_eq!(before, after, "db, -wal and -shm unchanged in bytes and mtime");
        assert_eq!(parts(&db), vec![wal_path(&db)]);
        drop(w);
    }

    #[test]
    fn snapshots_during_concurrent_writes_are_consistent() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("busy.db");
        let w = live_writer(&db);
        w.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);").unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let writer = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut written = 0i64;
                while !stop.load(Ordering::Relaxed) {
                    w.execute("INSERT INTO t(v) VALUES (?1)", [format!("{written:04096}")]).unwrap();
                    written += 1;
                    // Checkpoints and WAL resets are what a copy can race with.
                    if written % 50 == 0 {
                        w.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).unwrap();
                    }
                }
                written
            })
        };
        let mut last = 0i64;
        let (mut opened, mut busy) = (0, 0);
        let deadline = std::time::Instant::now() + Duration::from_millis(1500);
        while std::time::Instant::now() < deadline {
            match Snapshot::open(&db) {
                Ok(snap) => {
                    let (n, max): (i64, Option<i64>) =
                        snap.conn().query_row("SELECT count(*), max(id) FROM t", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
                    assert_eq!(Some(n), max.or(Some(0)), "rows are 1..=n with no gap: a consistent state");
                    assert!(n >= last, "row count never goes back ({n} < {last})");
                    last = n;
                    opened += 1;
                }
                Err(FormatError::Io { source, path }) if source.kind() == std::io::ErrorKind::ResourceBusy => {
                    assert_eq!(path, db);
                    busy += 1;
                }
                Err(e) => panic!("unexpected error: {e}"),
            }
        }
        stop.store(true, Ordering::Relaxed);
        let written = writer.join().unwrap();
        eprintln!("{opened} snapshots opened, {busy} busy, {} copies retried, {written} rows written", RETRIES.load(Ordering::Relaxed));
        assert!(opened > 0, "some snapshot opened ({busy} busy)");
        assert!(last <= written);
        let final_count: i64 = Snapshot::open(&db).unwrap().conn().query_row("SELECT count(*) FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(final_count, written);
    }

    #[test]
    fn a_read_only_store_opens_and_the_copy_goes_where_asked() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("ro.db");
        let w = live_writer(&db);
        w.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);").unwrap();
        #[cfg(unix)]
        for p in [db.clone(), wal_path(&db)] {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o400)).unwrap();
        }
        let cache = tempfile::tempdir().unwrap();
        let snap = Snapshot::open_in(&db, cache.path()).unwrap();
        let n: i64 = snap.conn().query_row("SELECT count(*) FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 1);
        let copies: Vec<_> = std::fs::read_dir(cache.path()).unwrap().collect();
        assert_eq!(copies.len(), 1, "one private directory under the given parent");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = copies[0].as_ref().unwrap().metadata().unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700);
        }
        drop(snap);
        assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0, "the copy is removed with the snapshot");
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_database_is_read_with_the_wal_beside_its_target() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        let db = dir.path().join("real/store.db");
        let w = live_writer(&db);
        w.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2);").unwrap();
        let link = dir.path().join("link.db");
        std::os::unix::fs::symlink(&db, &link).unwrap();
        let n: i64 = Snapshot::open(&link).unwrap().conn().query_row("SELECT count(*) FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 2);
        assert_eq!(parts(&link), vec![wal_path(&std::fs::canonicalize(&db).unwrap())]);
    }

    #[test]
    fn strict_tables_are_readable() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("strict.db");
        let w = live_writer(&db);
        w.execute_batch(
            "CREATE TABLE s(id TEXT PRIMARY KEY, n INTEGER NOT NULL, data BLOB) STRICT; INSERT INTO s VALUES ('a', 7, x'7b7d');",
        )
        .unwrap();
        let snap = Snapshot::open(&db).unwrap();
        let (id, n): (String, i64) = snap.conn().query_row("SELECT id, n FROM s", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        assert_eq!((id.as_str(), n), ("a", 7));
        let json = snap.conn().query_row("SELECT data FROM s", [], |r| Ok(column_json(r, 0))).unwrap().unwrap();
        assert_eq!(json, Some(serde_json::json!({})));
        assert_eq!(table_columns(snap.conn(), "s").unwrap(), vec!["id", "n", "data"]);
        assert!(table_columns(snap.conn(), "missing").unwrap().is_empty());
    }

    #[test]
    fn zstd_blobs_decode_and_bombs_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("blob.db");
        let w = live_writer(&db);
        let doc = br#"{"type":"text","text":"compressed hello"}"#;
        let packed = zstd::encode_all(&doc[..], 3).unwrap();
        w.execute_batch("CREATE TABLE b(id INTEGER PRIMARY KEY, data BLOB);").unwrap();
        w.execute("INSERT INTO b(data) VALUES (?1)", [&packed]).unwrap();
        w.execute("INSERT INTO b(data) VALUES (?1)", [&doc[..]]).unwrap();
        let snap = Snapshot::open(&db).unwrap();
        let mut stmt = snap.conn().prepare("SELECT data FROM b ORDER BY id").unwrap();
        let values: Vec<_> = stmt.query_map([], |r| Ok(column_json(r, 0).unwrap())).unwrap().map(Result::unwrap).collect();
        assert_eq!(values[0].as_ref().unwrap()["text"], "compressed hello");
        assert_eq!(values[0], values[1], "raw BLOBs are read as they are");
        assert_eq!(value_text(ValueRef::Blob(&packed)).unwrap().as_deref(), Some(std::str::from_utf8(doc).unwrap()));

        let bomb = zstd::encode_all(&vec![0u8; 64 << 20][..], 19).unwrap();
        assert!(bomb.len() as u64 * crate::read::MAX_DECODE_RATIO < 64 << 20, "the test bomb exceeds the ratio cap");
        assert!(matches!(decode_blob(&bomb), Err(BlobError::TooLarge { .. })));
        assert!(decode_blob(&ZSTD_MAGIC).is_err(), "a cut frame is an error");
    }

    #[test]
    fn garbage_empty_and_missing_paths_are_errors_naming_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let garbage = dir.path().join("garbage.db");
        std::fs::write(&garbage, vec![0x5a; 8192]).unwrap();
        let err = Snapshot::open(&garbage).unwrap_err();
        assert!(matches!(&err, FormatError::Corrupt { path, .. } if *path == garbage), "{err}");
        assert!(err.to_string().contains("garbage.db"));

        let empty = dir.path().join("empty.db");
        std::fs::write(&empty, b"").unwrap();
        let err = Snapshot::open(&empty).unwrap_err();
        assert!(matches!(&err, FormatError::Corrupt { path, .. } if *path == empty), "{err}");
        assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0, "still empty");

        let missing = dir.path().join("missing.db");
        let err = Snapshot::open(&missing).unwrap_err();
        assert!(err.to_string().contains("missing.db"), "{err}");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left.len(), 2, "nothing created beside: {left:?}");
        assert!(!missing.exists() && !wal_path(&missing).exists() && !shm_path(&missing).exists());
    }

    #[test]
    fn loose_column_types_read_as_numbers_and_times() {
        assert_eq!(value_i64(ValueRef::Text(b" 42 ")), Some(42));
        assert_eq!(value_i64(ValueRef::Real(3.9)), Some(3));
        assert_eq!(value_i64(ValueRef::Text(b"x")), None);
        assert_eq!(value_timestamp(ValueRef::Integer(1_775_030_400_000)), Some(Timestamp(1_775_030_400_000)));
        assert_eq!(value_timestamp(ValueRef::Text(b"2026-04-01T08:00:00Z")), Some(Timestamp(1_775_030_400_000)));
        assert_eq!(value_timestamp(ValueRef::Integer(0)), None);
    }

    #[test]
    fn row_cursor_rereads_touched_sessions_only_when_their_state_changed() {
        let mut states: std::collections::HashMap<String, SessionState> = [
            ("old".to_string(), (Some(1_000), 3, 30)),
            ("recent".to_string(), (Some(100_000), 5, 50)),
            ("timeless".to_string(), (None, 1, 1)),
        ]
        .into_iter()
        .collect();
        let text = RowCursor::after(&states, Some(42)).expect("a cursor");
        let c = RowCursor::parse(&text).expect("round trip");
        assert_eq!((c.newest, c.mark, c.recent.len()), (100_000, 42, 1), "only sessions inside the slack are remembered");
        let touched = c.touched_since(&states);
        assert_eq!(touched.into_iter().collect::<Vec<_>>(), vec!["timeless".to_string()], "unchanged recent one is not re-read");
        states.insert("recent".to_string(), (Some(100_000), 6, 60));
        states.insert("late".to_string(), (Some(80_000), 1, 1));
        let mut touched: Vec<String> = c.touched_since(&states).into_iter().collect();
        touched.sort();
        assert_eq!(touched, vec!["late", "recent", "timeless"], "a same-second change and a late commit are seen");
        let older = r#"{"newest":5,"message_id":7,"recent":[["a",5,2]]}"#;
        assert_eq!(RowCursor::parse(older), Some(RowCursor { newest: 5, mark: 7, recent: vec![("a".into(), (Some(5), 2, 0))] }));
        assert!(RowCursor::parse("garbage").is_none());
        assert!(RowCursor::parse("{}").is_none(), "a cursor names a mark or a time");
        // What the adapters wrote before they shared this cursor still reads.
        assert_eq!(RowCursor::parse(r#"{"max_id": 9}"#), Some(RowCursor { newest: 0, mark: 9, recent: vec![] }));
        assert_eq!(RowCursor::parse(r#"{"max_rowid": 4}"#).map(|c| c.mark), Some(4));
        assert_eq!(RowCursor::parse(r#"{"newest": 7, "recent": [["x", 7, 100]]}"#).map(|c| (c.mark, c.recent.len())), Some((0, 1)));
        // A store without times keeps only its mark.
        let marked = RowCursor::after(&HashMap::new(), Some(12)).expect("a mark is enough");
        assert_eq!(RowCursor::parse(&marked), Some(RowCursor { newest: 0, mark: 12, recent: vec![] }));
    }
}
