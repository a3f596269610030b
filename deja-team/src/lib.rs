//! Team memory on PostgreSQL (DESIGN §10, `docs/team-memory.md`): the client half.
//! deja-core's `team` module decides what leaves the machine (project keys, the push
//! plan from the archive's cursor, the secret gate); this crate connects, keeps the
//! schema, sends the plan, and administers grants. Access control is PostgreSQL's
//! own (roles and row-level security, [`schema`]), not deja's.
//!
//! Why these crates: `postgres` is the synchronous face of `tokio-postgres`, the
//! maintained pure-Rust client (no libpq to link), and deja's commands are synchronous
//! — a push is a few large round trips, a search one query under a deadline. TLS is
//! `rustls` through `tokio-postgres-rustls` with the ring provider, so the build needs
//! no OpenSSL and no second C toolchain; certificates are checked against the
//! system's trust store or `sslrootcert` (`conn`). It is a crate of its own so that
//! deja-core, which seventy adapters compile against, does not build a TLS stack and a
//! database client.

pub mod conn;
pub mod docs;
pub mod schema;
pub mod search;

use std::time::Duration;

use deja_core::team::{Outgoing, Plan};
pub use postgres;
use postgres::Client;

pub use conn::Target;
use docs::{session_extra, turn_extra};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("team store connection settings: {0}")]
    Config(String),
    #[error("cannot reach the team store {target}: {source}")]
    Connect {
        target: String,
        #[source]
        source: postgres::Error,
    },
    #[error("the team store {target} did not answer within {} ms", after.as_millis())]
    Timeout { target: String, after: Duration },
    #[error("team store schema: {0}")]
    Schema(String),
    #[error("{what}: {}", describe(source))]
    Sql {
        what: String,
        #[source]
        source: postgres::Error,
    },
}

/// A server error's own message (and its detail), not the crate's generic "db error".
fn describe(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => match db.detail() {
            Some(d) => format!("{} ({d})", db.message()),
            None => db.message().to_string(),
        },
        None => e.to_string(),
    }
}

impl Error {
    pub(crate) fn sql(what: &'static str) -> impl Fn(postgres::Error) -> Error {
        move |source| Error::Sql { what: what.to_string(), source }
    }
    pub(crate) fn sql_owned(what: String) -> impl Fn(postgres::Error) -> Error {
        move |source| Error::Sql { what: what.clone(), source }
    }

    /// The server refused because of a row-level security policy or a privilege.
    pub fn is_refused(&self) -> bool {
        match self {
            Error::Sql { source, .. } => source.code().is_some_and(|c| *c == postgres::error::SqlState::INSUFFICIENT_PRIVILEGE),
            _ => false,
        }
    }

    /// The connection failed or broke: the server is down, unreachable, or restarting.
    pub fn is_unreachable(&self) -> bool {
        match self {
            Error::Connect { .. } | Error::Timeout { .. } => true,
            Error::Sql { source, .. } => source.is_closed() || source.as_db_error().is_none() && source.code().is_none(),
            _ => false,
        }
    }
}

/// A connection to the team store, with the schema checked.
pub struct Store {
    pub client: Client,
    pub target: String,
}

impl Store {
    /// Connects and checks the schema is one this deja knows.
    pub fn open(target: &Target, timeout: Option<Duration>) -> Result<Store, Error> {
        let mut client = target.connect(timeout)?;
        schema::check(&mut client)?;
        Ok(Store { client, target: target.display() })
    }

    /// The role this connection writes as.
    pub fn role(&mut self) -> Result<String, Error> {
        Ok(self.client.query_one("SELECT current_user::text", &[]).map_err(Error::sql("asking who we are"))?.get(0))
    }

    /// Claims `machine` for this role (the first role to push a machine name owns it);
    /// `Err` names the owner when another role has it.
    pub fn claim_machine(&mut self, machine: &str) -> Result<(), Error> {
        self.client
            .execute("INSERT INTO deja.machines (machine) VALUES ($1) ON CONFLICT (machine) DO NOTHING", &[&machine])
            .map_err(Error::sql("claiming this machine's name"))?;
        let owner: String = self
            .client
            .query_one("SELECT owner::text FROM deja.machines WHERE machine = $1", &[&machine])
            .map_err(Error::sql("claiming this machine's name"))?
            .get(0);
        let me = self.role()?;
        if owner != me {
            return Err(Error::Config(format!(
                "the machine name `{machine}` belongs to the role `{owner}` in this store; set another with `deja team init --machine NAME`"
            )));
        }
        Ok(())
    }

    /// Replaces the rows of each session in `batch` (and removes those in `remove`) in
    /// one transaction: all of the batch is on the server, or none of it.
    pub fn send(&mut self, machine: &str, batch: &[Outgoing], remove: &[String]) -> Result<u64, Error> {
        let mut tx = self.client.transaction().map_err(Error::sql("starting a push"))?;
        let mut rows = 0u64;
        for key in remove {
            tx.execute("DELETE FROM deja.turns WHERE machine = $1 AND session_key = $2", &[&machine, key])
                .map_err(Error::sql("removing an unshared session"))?;
            tx.execute("DELETE FROM deja.sessions WHERE machine = $1 AND session_key = $2", &[&machine, key])
                .map_err(Error::sql("removing an unshared session"))?;
        }
        for s in batch {
            tx.execute("DELETE FROM deja.turns WHERE machine = $1 AND session_key = $2", &[&machine, &s.key])
                .map_err(Error::sql("replacing a session's turns"))?;
            let m = &s.meta;
            let ts = |t: Option<deja_core::Timestamp>| t.map(|t| t.0 as f64 / 1000.0);
            tx.execute(
                "INSERT INTO deja.sessions (machine, session_key, project, harness, session, title, project_path, started, updated, turns, digest, extra)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, to_timestamp($8), to_timestamp($9), $10, $11, $12::text::jsonb)
                 ON CONFLICT (machine, session_key) DO UPDATE SET project = EXCLUDED.project, title = EXCLUDED.title,
                   project_path = EXCLUDED.project_path, started = EXCLUDED.started, updated = EXCLUDED.updated,
                   turns = EXCLUDED.turns, digest = EXCLUDED.digest, extra = EXCLUDED.extra, pushed = now()",
                &[
                    &machine,
                    &s.key,
                    &s.project,
                    &m.harness,
                    &m.id,
                    &m.title,
                    &m.project,
                    &ts(m.started),
                    &ts(m.updated),
                    &(s.turns.len() as i32),
                    &(s.digest as i64),
                    &session_extra(m)?,
                ],
            )
            .map_err(Error::sql("writing a session"))?;
            // One statement per session: the turns as parallel arrays.
            let mut ids = Vec::with_capacity(s.turns.len());
            let mut seqs = Vec::with_capacity(s.turns.len());
            let mut roles = Vec::with_capacity(s.turns.len());
            let mut times: Vec<Option<f64>> = Vec::with_capacity(s.turns.len());
            let mut texts = Vec::with_capacity(s.turns.len());
            let mut extras = Vec::with_capacity(s.turns.len());
            for t in &s.turns {
                ids.push(deja_core::archive::turn_id(&m.harness, &m.id, t.seq));
                seqs.push(t.seq as i32);
                roles.push(t.role.as_str().to_string());
                times.push(ts(t.time));
                // PostgreSQL text cannot hold NUL.
                texts.push(t.text.replace('\0', ""));
                extras.push(turn_extra(t)?);
            }
            rows += tx
                .execute(
                    "INSERT INTO deja.turns (machine, turn_id, project, session_key, seq, role, time, text, extra)
                     SELECT $1, u.id, $2, $3, u.seq, u.role, to_timestamp(u.time), u.text, u.extra::jsonb
                     FROM unnest($4::text[], $5::int[], $6::text[], $7::float8[], $8::text[], $9::text[]) AS u(id, seq, role, time, text, extra)",
                    &[&machine, &s.project, &s.key, &ids, &seqs, &roles, &times, &texts, &extras],
                )
                .map_err(Error::sql("writing a session's turns"))?;
        }
        tx.commit().map_err(Error::sql("committing a push"))?;
        Ok(rows)
    }

    /// Deletes forgotten sessions of this machine and leaves a tombstone for each.
    pub fn forget(&mut self, machine: &str, keys: &[String]) -> Result<u64, Error> {
        let mut tx = self.client.transaction().map_err(Error::sql("starting a forget"))?;
        let mut n = 0;
        for key in keys {
            let project: Option<String> = tx
                .query_opt("SELECT project FROM deja.sessions WHERE machine = $1 AND session_key = $2", &[&machine, key])
                .map_err(Error::sql("forgetting a session"))?
                .map(|r| r.get(0));
            let Some(project) = project else { continue };
            tx.execute("DELETE FROM deja.turns WHERE machine = $1 AND session_key = $2", &[&machine, key])
                .map_err(Error::sql("forgetting a session"))?;
            n += tx
                .execute("DELETE FROM deja.sessions WHERE machine = $1 AND session_key = $2", &[&machine, key])
                .map_err(Error::sql("forgetting a session"))?;
            tx.execute(
                "INSERT INTO deja.tombstones (machine, session_key, project) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                &[&machine, key, &project],
            )
            .map_err(Error::sql("leaving a tombstone"))?;
        }
        tx.commit().map_err(Error::sql("committing a forget"))?;
        Ok(n)
    }

    /// Lets `role` read `project` (and makes it a member, so it may push its own).
    pub fn grant(&mut self, role: &str, project: &str) -> Result<(), Error> {
        let mut tx = self.client.transaction().map_err(Error::sql("starting a grant"))?;
        let exists: bool = tx
            .query_one("SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", &[&role])
            .map_err(Error::sql("looking up the role"))?
            .get(0);
        if !exists {
            return Err(Error::Config(format!("there is no role `{role}` (CREATE ROLE {role} LOGIN PASSWORD '…' makes one)")));
        }
        tx.batch_execute(&format!("GRANT {} TO {}", schema::MEMBER_ROLE, quote_ident(role)))
            .map_err(Error::sql("making the role a member"))?;
        tx.execute("INSERT INTO deja.grants (role, project) VALUES ($1, $2) ON CONFLICT DO NOTHING", &[&role, &project])
            .map_err(Error::sql("granting the project"))?;
        tx.commit().map_err(Error::sql("committing the grant"))
    }

    /// Takes back `role`'s read access to `project`; whether it had it.
    pub fn revoke(&mut self, role: &str, project: &str) -> Result<bool, Error> {
        let n = self
            .client
            .execute("DELETE FROM deja.grants WHERE role = $1 AND project = $2", &[&role, &project])
            .map_err(Error::sql("revoking the project"))?;
        Ok(n > 0)
    }

    /// `(role, project)` of every grant this role can see.
    pub fn grants(&mut self) -> Result<Vec<(String, String)>, Error> {
        let rows =
            self.client.query("SELECT role::text, project FROM deja.grants ORDER BY 1, 2", &[]).map_err(Error::sql("listing grants"))?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// Sessions and turns this machine has on the server.
    pub fn counts(&mut self, machine: &str) -> Result<(i64, i64), Error> {
        let r = self
            .client
            .query_one(
                "SELECT (SELECT count(*) FROM deja.sessions WHERE machine = $1), (SELECT count(*) FROM deja.turns WHERE machine = $1)",
                &[&machine],
            )
            .map_err(Error::sql("counting this machine's rows"))?;
        Ok((r.get(0), r.get(1)))
    }
}

/// An identifier quoted for SQL.
pub fn quote_ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// How many sessions one transaction carries, and roughly how many turns.
pub const BATCH_SESSIONS: usize = 64;
pub const BATCH_TURNS: usize = 4096;

/// Splits a plan's sessions into transaction-sized batches.
pub fn batches(plan: &Plan) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut turns) = (0, 0);
    for (i, s) in plan.send.iter().enumerate() {
        if i > start && (i - start >= BATCH_SESSIONS || turns + s.turns.len() > BATCH_TURNS) {
            out.push(start..i);
            start = i;
            turns = 0;
        }
        turns += s.turns.len();
    }
    if start < plan.send.len() {
        out.push(start..plan.send.len());
    }
    out
}
