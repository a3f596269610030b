//! The team store's schema, versioned: `deja team init` brings a database to
//! [`SCHEMA_VERSION`] by running the migrations it lacks, each in its own transaction
//! under an advisory lock (two machines initializing at once take turns), and refuses
//! a database a newer deja migrated past what this one knows — reading or writing it
//! would guess at columns it has never seen.
//!
//! Everything lives in the schema `deja`:
//! - `turns` — one row per turn a machine pushed, keyed by `(machine, turn_id)`; `author`
//!   is the PostgreSQL role that wrote it (default `current_user`), `text` the redacted
//!   turn (lz4 where the server has it), `extra` what the export document has beyond the
//!   columns ([`crate::docs`]; NULL for most turns), `id` a monotonic change feed.
//!   Indexes: GIN on the expression `to_tsvector('english', text)` (the stemmed and
//!   relevance tiers; computed, not a stored column: a stored `tsvector` took more room
//!   than the compressed text itself), GIN trigram on the whole `text` (the exact and
//!   fuzzy tiers; a trigram index of only each turn's first 2 KB measured 9 % smaller on
//!   the benchmark corpus — long tool outputs repeat their trigrams — not worth missing
//!   a word further down a log), btree on `(project, time)`, `(machine, session_key)`
//!   and `id`.
//! - `sessions` — one row per pushed session (title, project, times, digest; `extra`
//!   the export document's other session fields, once per session).
//! - `machines` — which role owns a machine name (the first to push it), so no role
//!   writes rows as another's machine.
//! - `grants` — which role may read which project (`deja team grant`).
//! - `tombstones` — sessions forgotten on their machine (`deja forget`).
//!
//! Row-level security is the access control: a role reads its own rows and those of
//! the projects granted to it (or to a group role it is a member of), and inserts,
//! updates and deletes only rows whose author is itself, on a machine it owns. The
//! owner of the tables (the role that ran `init`) bypasses the policies, as PostgreSQL
//! owners do: it is the administrator.

use postgres::Client;

use crate::Error;

/// The schema version this deja reads and writes.
pub const SCHEMA_VERSION: i32 = 1;

/// The group role every member is granted (`deja team grant` does it): the table
/// privileges hang on it, the row policies decide which rows.
pub const MEMBER_ROLE: &str = "deja_member";

/// Migration `n` takes the schema from version `n` to `n + 1`.
const MIGRATIONS: &[&str] = &[r#"
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE SCHEMA IF NOT EXISTS deja;
CREATE TABLE deja.machines (
    machine text PRIMARY KEY,
    owner name NOT NULL DEFAULT current_user,
    since timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE deja.sessions (
    machine text NOT NULL,
    session_key text NOT NULL,
    author name NOT NULL DEFAULT current_user,
    project text NOT NULL,
    harness text NOT NULL,
    session text NOT NULL,
    title text,
    project_path text,
    started timestamptz,
    updated timestamptz,
    turns integer NOT NULL,
    digest bigint NOT NULL,
    pushed timestamptz NOT NULL DEFAULT now(),
    extra jsonb,
    PRIMARY KEY (machine, session_key)
);
CREATE TABLE deja.turns (
    id bigint GENERATED ALWAYS AS IDENTITY,
    machine text NOT NULL,
    turn_id text NOT NULL,
    author name NOT NULL DEFAULT current_user,
    project text NOT NULL,
    session_key text NOT NULL,
    seq integer NOT NULL,
    role text NOT NULL,
    time timestamptz,
    text text NOT NULL,
    extra jsonb,
    PRIMARY KEY (machine, turn_id)
);
CREATE INDEX turns_fts ON deja.turns USING gin (to_tsvector('english', text));
CREATE INDEX turns_trgm ON deja.turns USING gin (text gin_trgm_ops);
CREATE INDEX turns_project_time ON deja.turns (project, time);
CREATE INDEX turns_session ON deja.turns (machine, session_key);
CREATE INDEX turns_feed ON deja.turns (id);
CREATE TABLE deja.grants (
    role name NOT NULL,
    project text NOT NULL,
    granted timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (role, project)
);
CREATE TABLE deja.tombstones (
    machine text NOT NULL,
    session_key text NOT NULL,
    author name NOT NULL DEFAULT current_user,
    project text NOT NULL,
    forgotten timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (machine, session_key)
);

DO $$ BEGIN
    CREATE ROLE deja_member NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;
GRANT USAGE ON SCHEMA deja TO deja_member;
GRANT SELECT, INSERT, UPDATE, DELETE ON deja.turns, deja.sessions TO deja_member;
GRANT SELECT, INSERT ON deja.machines, deja.tombstones TO deja_member;
GRANT SELECT ON deja.grants TO deja_member;

ALTER TABLE deja.turns ENABLE ROW LEVEL SECURITY;
ALTER TABLE deja.sessions ENABLE ROW LEVEL SECURITY;
ALTER TABLE deja.machines ENABLE ROW LEVEL SECURITY;
ALTER TABLE deja.grants ENABLE ROW LEVEL SECURITY;
ALTER TABLE deja.tombstones ENABLE ROW LEVEL SECURITY;

CREATE POLICY read ON deja.turns FOR SELECT USING (author = current_user OR EXISTS (SELECT 1 FROM deja.grants g WHERE g.project = turns.project));
CREATE POLICY write ON deja.turns FOR INSERT WITH CHECK (author = current_user AND EXISTS (SELECT 1 FROM deja.machines m WHERE m.machine = turns.machine AND m.owner = current_user));
CREATE POLICY change ON deja.turns FOR UPDATE USING (author = current_user) WITH CHECK (author = current_user AND EXISTS (SELECT 1 FROM deja.machines m WHERE m.machine = turns.machine AND m.owner = current_user));
CREATE POLICY remove ON deja.turns FOR DELETE USING (author = current_user);

CREATE POLICY read ON deja.sessions FOR SELECT USING (author = current_user OR EXISTS (SELECT 1 FROM deja.grants g WHERE g.project = sessions.project));
CREATE POLICY write ON deja.sessions FOR INSERT WITH CHECK (author = current_user AND EXISTS (SELECT 1 FROM deja.machines m WHERE m.machine = sessions.machine AND m.owner = current_user));
CREATE POLICY change ON deja.sessions FOR UPDATE USING (author = current_user) WITH CHECK (author = current_user AND EXISTS (SELECT 1 FROM deja.machines m WHERE m.machine = sessions.machine AND m.owner = current_user));
CREATE POLICY remove ON deja.sessions FOR DELETE USING (author = current_user);

CREATE POLICY read ON deja.machines FOR SELECT USING (true);
CREATE POLICY claim ON deja.machines FOR INSERT WITH CHECK (owner = current_user);

CREATE POLICY read ON deja.grants FOR SELECT USING (role IN (SELECT rolname FROM pg_roles WHERE pg_has_role(current_user, oid, 'MEMBER')));

CREATE POLICY read ON deja.tombstones FOR SELECT USING (author = current_user OR EXISTS (SELECT 1 FROM deja.grants g WHERE g.project = tombstones.project));
CREATE POLICY write ON deja.tombstones FOR INSERT WITH CHECK (author = current_user AND EXISTS (SELECT 1 FROM deja.machines m WHERE m.machine = tombstones.machine AND m.owner = current_user));

-- lz4 where the server has it (PostgreSQL 14 and later, when built with it): it
-- compresses the text about as well as the default pglz at a fraction of the CPU, on
-- every push and every read. Elsewhere the default stays; nothing depends on it.
DO $$ BEGIN
    EXECUTE 'ALTER TABLE deja.turns ALTER COLUMN text SET COMPRESSION lz4, ALTER COLUMN extra SET COMPRESSION lz4';
EXCEPTION WHEN OTHERS THEN NULL;
END $$;

CREATE TABLE deja.meta (key text PRIMARY KEY, value text NOT NULL);
GRANT SELECT ON deja.meta TO deja_member;
"#];

/// The version a database's schema is at (0: none).
pub fn version(client: &mut Client) -> Result<i32, Error> {
    let exists: bool =
        client.query_one("SELECT to_regclass('deja.meta') IS NOT NULL", &[]).map_err(Error::sql("reading the schema version"))?.get(0);
    if !exists {
        return Ok(0);
    }
    let row = client
        .query_opt("SELECT value FROM deja.meta WHERE key = 'schema_version'", &[])
        .map_err(Error::sql("reading the schema version"))?;
    let Some(row) = row else { return Ok(0) };
    let v: String = row.get(0);
    v.parse().map_err(|_| Error::Schema(format!("deja.meta says schema_version `{v}`, which is not a number")))
}

/// Refuses a schema this deja does not know: none yet, or a newer one.
pub fn check(client: &mut Client) -> Result<(), Error> {
    match version(client)? {
        0 => Err(Error::Schema("this database has no deja schema: run `deja team init` (as the administrator) first".into())),
        v if v > SCHEMA_VERSION => Err(newer(v)),
        _ => Ok(()),
    }
}

fn newer(v: i32) -> Error {
    Error::Schema(format!(
        "the team store's schema is version {v}, newer than this deja knows ({SCHEMA_VERSION}): upgrade deja; nothing was changed"
    ))
}

/// What [`migrate`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Migrated {
    pub from: i32,
    pub to: i32,
}

/// Brings the database to [`SCHEMA_VERSION`]; a no-op when it is there.
pub fn migrate(client: &mut Client) -> Result<Migrated, Error> {
    let mut tx = client.transaction().map_err(Error::sql("starting the migration"))?;
    // One migrator at a time per database; released with the transaction.
    tx.execute("SELECT pg_advisory_xact_lock(hashtext('deja.schema'))", &[]).map_err(Error::sql("locking the schema"))?;
    let from = version_in(&mut tx)?;
    if from > SCHEMA_VERSION {
        return Err(newer(from));
    }
    if from == SCHEMA_VERSION {
        // Up to date: members (who may not write the schema) init this way too.
        tx.commit().map_err(Error::sql("committing the migration"))?;
        return Ok(Migrated { from, to: from });
    }
    for (n, sql) in MIGRATIONS.iter().enumerate().skip(from as usize) {
        tx.batch_execute(sql).map_err(Error::sql_owned(format!("migrating the schema to version {}", n + 1)))?;
    }
    tx.execute(
        "INSERT INTO deja.meta (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        &[&SCHEMA_VERSION.to_string()],
    )
    .map_err(Error::sql("recording the schema version"))?;
    tx.commit().map_err(Error::sql("committing the migration"))?;
    Ok(Migrated { from, to: SCHEMA_VERSION })
}

fn version_in(tx: &mut postgres::Transaction<'_>) -> Result<i32, Error> {
    let exists: bool =
        tx.query_one("SELECT to_regclass('deja.meta') IS NOT NULL", &[]).map_err(Error::sql("reading the schema version"))?.get(0);
    if !exists {
        return Ok(0);
    }
    let row =
        tx.query_opt("SELECT value FROM deja.meta WHERE key = 'schema_version'", &[]).map_err(Error::sql("reading the schema version"))?;
    match row {
        None => Ok(0),
        Some(r) => {
            let v: String = r.get(0);
            v.parse().map_err(|_| Error::Schema(format!("deja.meta says schema_version `{v}`, which is not a number")))
        }
    }
}
