//! Connecting to the team store the way every PostgreSQL tool does (libpq's
//! conventions), so a user's existing set-up just works: a URL
//! (`postgres://user@host:port/db?sslmode=…`) or a `key=value` string, completed by a
//! service file (`service=` or `PGSERVICE`, `PGSERVICEFILE`, `~/.pg_service.conf`,
//! `PGSYSCONFDIR/pg_service.conf`), then the environment (`PGHOST`, `PGPORT`, `PGUSER`,
//! `PGDATABASE`, `PGSSLMODE`, `PGSSLROOTCERT`, `PGCONNECT_TIMEOUT`, `PGPASSWORD`), then
//! `~/.pgpass` (or `PGPASSFILE`; ignored, as by libpq, when group or others can read
//! it), then the defaults. The `postgres` crate speaks the protocol but reads none of
//! these, so they are resolved here and handed to it as a `Config`.
//!
//! TLS is rustls (with the ring provider): `sslmode` keeps libpq's meaning —
//! `disable`; `allow`/`prefer` (the default) encrypt when the server offers it;
//! `require` encrypts without checking the certificate, unless a root certificate is
//! given (`sslrootcert`, or `~/.postgresql/root.crt` exists), when it is `verify-ca`;
//! `verify-ca` checks the chain against those roots (or the system's); `verify-full`
//! checks the host name as well.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use deja_core::StoreEnv;
use postgres::config::SslMode;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

use crate::Error;

/// The libpq keywords deja understands; any other is an error naming it.
const KEYWORDS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "user",
    "password",
    "dbname",
    "sslmode",
    "sslrootcert",
    "connect_timeout",
    "application_name",
    "service",
    "options",
    "target_session_attrs",
];

/// A connection target with every libpq source applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub params: BTreeMap<String, String>,
    /// Where `~/.postgresql/root.crt` is looked for.
    home: PathBuf,
}

impl Target {
    /// Resolves `spec` (a URL or `key=value` string) with the service file, the
    /// environment and the password file.
    pub fn resolve(env: &StoreEnv, spec: &str) -> Result<Target, Error> {
        let mut params = parse(spec)?;
        if let Some(service) = params.get("service").cloned().or_else(|| env.var("PGSERVICE").map(str::to_string)) {
            for (k, v) in service_params(env, &service)? {
                params.entry(k).or_insert(v);
            }
        }
        for (key, var) in [
            ("host", "PGHOST"),
            ("hostaddr", "PGHOSTADDR"),
            ("port", "PGPORT"),
            ("user", "PGUSER"),
            ("dbname", "PGDATABASE"),
            ("sslmode", "PGSSLMODE"),
            ("sslrootcert", "PGSSLROOTCERT"),
            ("connect_timeout", "PGCONNECT_TIMEOUT"),
            ("password", "PGPASSWORD"),
            ("options", "PGOPTIONS"),
        ] {
            if let Some(v) = env.var(var).filter(|v| !v.is_empty()) {
                params.entry(key.to_string()).or_insert_with(|| v.to_string());
            }
        }
        if !params.contains_key("host") && !params.contains_key("hostaddr") {
            let socket = "/var/run/postgresql";
            params.insert("host".into(), if Path::new(socket).is_dir() { socket.into() } else { "localhost".into() });
        }
        params.entry("port".into()).or_insert_with(|| "5432".into());
        if !params.contains_key("user") {
            let user = env.var("USER").or_else(|| env.var("LOGNAME")).or_else(|| env.var("USERNAME")).unwrap_or("postgres");
            params.insert("user".into(), user.to_string());
        }
        if !params.contains_key("dbname") {
            let user = params["user"].clone();
            params.insert("dbname".into(), user);
        }
        if !params.contains_key("password") {
            if let Some(pw) = pgpass(env, &params) {
                params.insert("password".into(), pw);
            }
        }
        Ok(Target { params, home: env.home().to_path_buf() })
    }

    /// `user@host:port/dbname`: how messages name the store (never the password).
    pub fn display(&self) -> String {
        let p = |k: &str| self.params.get(k).map(String::as_str).unwrap_or("");
        let host = if p("host").is_empty() { p("hostaddr") } else { p("host") };
        format!("{}@{}:{}/{}", p("user"), host, p("port"), p("dbname"))
    }

    /// Connects within `timeout` (the smaller of it and `connect_timeout`).
    pub fn connect(&self, timeout: Option<Duration>) -> Result<postgres::Client, Error> {
        let p = &self.params;
        let mut config = postgres::Config::new();
        for h in p.get("host").map(String::as_str).unwrap_or("").split(',').filter(|h| !h.is_empty()) {
            config.host(h);
        }
        for a in p.get("hostaddr").map(String::as_str).unwrap_or("").split(',').filter(|h| !h.is_empty()) {
            let addr = a.parse().map_err(|_| Error::Config(format!("hostaddr `{a}` is not an IP address")))?;
            config.hostaddr(addr);
        }
        for port in p["port"].split(',') {
            let port: u16 = port.trim().parse().map_err(|_| Error::Config(format!("port `{port}` is not a port number")))?;
            config.port(port);
        }
        config.user(&p["user"]).dbname(&p["dbname"]);
        config.application_name(p.get("application_name").map_or("deja", String::as_str));
        if let Some(pw) = p.get("password") {
            config.password(pw);
        }
        if let Some(o) = p.get("options") {
            config.options(o);
        }
        let configured = match p.get("connect_timeout").map(|s| s.trim()) {
            Some(s) => {
                let secs: u64 = s.parse().map_err(|_| Error::Config(format!("connect_timeout `{s}` is not a number of seconds")))?;
                // libpq: 0 is no timeout; anything under 2 s is 2 s.
                (secs > 0).then(|| Duration::from_secs(secs.max(2)))
            }
            None => None,
        };
        if let Some(t) = [timeout, configured].into_iter().flatten().min() {
            config.connect_timeout(t);
        }
        let mode = p.get("sslmode").map_or("prefer", String::as_str);
        let (ssl, verify) = match mode {
            "disable" => (SslMode::Disable, Verify::None),
            "allow" | "prefer" => (SslMode::Prefer, Verify::None),
            "require" => (SslMode::Require, if self.root_cert().is_some() { Verify::Chain } else { Verify::None }),
            "verify-ca" => (SslMode::Require, Verify::Chain),
            "verify-full" => (SslMode::Require, Verify::Full),
            other => {
                return Err(Error::Config(format!(
                    "sslmode `{other}` is not one of disable, allow, prefer, require, verify-ca, verify-full"
                )))
            }
        };
        config.ssl_mode(ssl);
        let target = self.display();
        let tls = tokio_postgres_rustls::MakeRustlsConnect::new(self.tls(verify)?);
        config.connect(tls).map_err(|source| Error::Connect { target, source })
    }

    /// The root certificate file: `sslrootcert`, else `~/.postgresql/root.crt` when it exists.
    fn root_cert(&self) -> Option<PathBuf> {
        if let Some(p) = self.params.get("sslrootcert").filter(|p| p.as_str() != "system") {
            return Some(PathBuf::from(p));
        }
        let default = self.home.join(".postgresql/root.crt");
        default.is_file().then_some(default)
    }

    fn tls(&self, verify: Verify) -> Result<rustls::ClientConfig, Error> {
        // ring rather than aws-lc-rs: no cmake or second C build. rustls marks ring's
        // provider deprecated for lacking post-quantum key exchange, which PostgreSQL
        // servers do not offer yet.
        #[allow(deprecated)]
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::Config(format!("TLS: {e}")))?;
        if verify == Verify::None {
            return Ok(builder.dangerous().with_custom_certificate_verifier(Arc::new(NoVerify(provider))).with_no_client_auth());
        }
        let mut roots = rustls::RootCertStore::empty();
        match self.root_cert() {
            Some(file) => {
                let certs = CertificateDer::pem_file_iter(&file)
                    .and_then(|it| it.collect::<Result<Vec<_>, _>>())
                    .map_err(|e| Error::Config(format!("sslrootcert {}: {e}", file.display())))?;
                roots.add_parsable_certificates(certs);
            }
            None => {
                roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
            }
        }
        if roots.is_empty() {
            return Err(Error::Config("no root certificate to verify the server with (set sslrootcert)".into()));
        }
        let inner = rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .map_err(|e| Error::Config(format!("TLS: {e}")))?;
        if verify == Verify::Full {
            return Ok(builder.with_webpki_verifier(inner).with_no_client_auth());
        }
        Ok(builder.dangerous().with_custom_certificate_verifier(Arc::new(ChainOnly(inner))).with_no_client_auth())
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Verify {
    None,
    Chain,
    Full,
}

/// `sslmode=require` and below: encrypted, the certificate not checked (libpq's meaning).
#[derive(Debug)]
struct NoVerify(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(m, c, d, &self.0.signature_verification_algorithms)
    }
    fn verify_tls13_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(m, c, d, &self.0.signature_verification_algorithms)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `sslmode=verify-ca`: the chain is checked, the host name is not.
#[derive(Debug)]
struct ChainOnly(Arc<rustls::client::WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end: &CertificateDer<'_>,
        rest: &[CertificateDer<'_>],
        name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.0.verify_server_cert(end, rest, name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForName))
            | Err(rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForNameContext { .. })) => {
                Ok(ServerCertVerified::assertion())
            }
            other => other,
        }
    }
    fn verify_tls12_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(m, c, d)
    }
    fn verify_tls13_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(m, c, d)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// `spec` as libpq keywords: a `postgres://` / `postgresql://` URL, or `key=value` pairs.
pub fn parse(spec: &str) -> Result<BTreeMap<String, String>, Error> {
    let spec = spec.trim();
    let mut out = BTreeMap::new();
    let rest = spec.strip_prefix("postgresql://").or_else(|| spec.strip_prefix("postgres://"));
    match rest {
        Some(rest) => {
            let (main, query) = rest.split_once('?').unwrap_or((rest, ""));
            let (authority, db) = main.split_once('/').unwrap_or((main, ""));
            let (userinfo, hosts) = match authority.rsplit_once('@') {
                Some((u, h)) => (Some(u), h),
                None => (None, authority),
            };
            if let Some(u) = userinfo {
                let (user, pw) = u.split_once(':').map_or((u, None), |(a, b)| (a, Some(b)));
                if !user.is_empty() {
                    out.insert("user".into(), decode(user)?);
                }
                if let Some(pw) = pw {
                    out.insert("password".into(), decode(pw)?);
                }
            }
            let (mut hs, mut ps) = (Vec::new(), Vec::new());
            for h in hosts.split(',').filter(|h| !h.is_empty()) {
                let (host, port) = if let Some(v6) = h.strip_prefix('[') {
                    let (addr, after) =
                        v6.split_once(']').ok_or_else(|| Error::Config(format!("`{h}`: an IPv6 address without its `]`")))?;
                    (addr.to_string(), after.strip_prefix(':').map(str::to_string))
                } else {
                    match h.rsplit_once(':') {
                        Some((a, p)) => (decode(a)?, Some(p.to_string())),
                        None => (decode(h)?, None),
                    }
                };
                hs.push(host);
                ps.push(port.unwrap_or_default());
            }
            if !hs.is_empty() && hs.iter().any(|h| !h.is_empty()) {
                out.insert("host".into(), hs.join(","));
            }
            if ps.iter().any(|p| !p.is_empty()) {
                out.insert("port".into(), ps.iter().map(|p| if p.is_empty() { "5432" } else { p }).collect::<Vec<_>>().join(","));
            }
            if !db.is_empty() {
                out.insert("dbname".into(), decode(db)?);
            }
            for pair in query.split('&').filter(|p| !p.is_empty()) {
                let (k, v) = pair.split_once('=').ok_or_else(|| Error::Config(format!("`{pair}` in the URL's query is not key=value")))?;
                insert(&mut out, &decode(k)?, decode(v)?)?;
            }
        }
        None if spec.contains("://") => {
            return Err(Error::Config(format!("`{}` is not a postgres:// or postgresql:// URL", spec.split("://").next().unwrap_or(""))))
        }
        None => {
            let mut chars = spec.chars().peekable();
            loop {
                while chars.peek().is_some_and(|c| c.is_whitespace()) {
                    chars.next();
                }
                if chars.peek().is_none() {
                    break;
                }
                let key: String = std::iter::from_fn(|| chars.next_if(|c| *c != '=' && !c.is_whitespace())).collect();
                while chars.peek().is_some_and(|c| c.is_whitespace()) {
                    chars.next();
                }
                if chars.next() != Some('=') {
                    return Err(Error::Config(format!("`{key}` is not followed by `=` (write key=value pairs or a postgres:// URL)")));
                }
                while chars.peek().is_some_and(|c| c.is_whitespace()) {
                    chars.next();
                }
                let mut value = String::new();
                if chars.peek() == Some(&'\'') {
                    chars.next();
                    loop {
                        match chars.next() {
                            Some('\\') => value.extend(chars.next()),
                            Some('\'') => break,
                            Some(c) => value.push(c),
                            None => return Err(Error::Config(format!("the quoted value of `{key}` is not closed"))),
                        }
                    }
                } else {
                    while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                        if c == '\\' {
                            value.extend(chars.next());
                        } else {
                            value.push(c);
                        }
                    }
                }
                insert(&mut out, &key, value)?;
            }
        }
    }
    Ok(out)
}

fn insert(out: &mut BTreeMap<String, String>, key: &str, value: String) -> Result<(), Error> {
    if !KEYWORDS.contains(&key) {
        return Err(Error::Config(format!("`{key}` is not a connection parameter deja knows ({})", KEYWORDS.join(", "))));
    }
    out.insert(key.to_string(), value);
    Ok(())
}

/// Percent-decoding of one URL part.
fn decode(s: &str) -> Result<String, Error> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok()).and_then(|h| u8::from_str_radix(h, 16).ok());
            let b = hex.ok_or_else(|| Error::Config(format!("`{s}`: a `%` not followed by two hex digits")))?;
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| Error::Config(format!("`{s}` does not decode to UTF-8")))
}

/// A URL (or `key=value` string) with its password taken out, for the settings file;
/// with whether there was one.
pub fn without_password(spec: &str) -> Result<(String, bool), Error> {
    let params = parse(spec)?;
    if !params.contains_key("password") {
        return Ok((spec.trim().to_string(), false));
    }
    let trimmed = spec.trim();
    if let Some(scheme_end) = trimmed.find("://") {
        let after = &trimmed[scheme_end + 3..];
        let authority_end = after.find(['/', '?']).unwrap_or(after.len());
        let authority = &after[..authority_end];
        if let Some((userinfo, hosts)) = authority.rsplit_once('@') {
            let user = userinfo.split_once(':').map_or(userinfo, |(u, _)| u);
            let at = if user.is_empty() { String::new() } else { format!("{user}@") };
            return Ok((format!("{}{at}{hosts}{}", &trimmed[..scheme_end + 3], &after[authority_end..]), true));
        }
        // A password given as a query parameter.
        let mut kept: Vec<&str> = Vec::new();
        let (main, query) = trimmed.split_once('?').unwrap_or((trimmed, ""));
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            if !pair.starts_with("password=") {
                kept.push(pair);
            }
        }
        let q = if kept.is_empty() { String::new() } else { format!("?{}", kept.join("&")) };
        return Ok((format!("{main}{q}"), true));
    }
    let rebuilt: Vec<String> = params
        .iter()
        .filter(|(k, _)| k.as_str() != "password")
        .map(|(k, v)| {
            if v.is_empty() || v.contains(|c: char| c.is_whitespace() || c == '\'' || c == '\\') {
                format!("{k}='{}'", v.replace('\\', "\\\\").replace('\'', "\\'"))
            } else {
                format!("{k}={v}")
            }
        })
        .collect();
    Ok((rebuilt.join(" "), true))
}

/// The keywords a service file gives `service`.
fn service_params(env: &StoreEnv, service: &str) -> Result<BTreeMap<String, String>, Error> {
    let mut files: Vec<PathBuf> = Vec::new();
    if let Some(f) = env.path_var("PGSERVICEFILE") {
        files.push(f);
    } else {
        files.push(env.home().join(".pg_service.conf"));
    }
    files.push(env.path_var("PGSYSCONFDIR").unwrap_or_else(|| PathBuf::from("/etc/postgresql-common")).join("pg_service.conf"));
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        let mut in_section = false;
        let mut found = false;
        let mut out = BTreeMap::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                in_section = name == service;
                found |= in_section;
                continue;
            }
            if in_section {
                let (k, v) =
                    line.split_once('=').ok_or_else(|| Error::Config(format!("{} line {}: not key=value", file.display(), n + 1)))?;
                insert(&mut out, k.trim(), v.trim().to_string())
                    .map_err(|e| Error::Config(format!("{} line {}: {e}", file.display(), n + 1)))?;
            }
        }
        if found {
            return Ok(out);
        }
    }
    Err(Error::Config(format!("service `{service}` is in no service file (PGSERVICEFILE, ~/.pg_service.conf)")))
}

/// The password `~/.pgpass` (or `PGPASSFILE`) gives these parameters: the first line
/// whose `host:port:database:user` fields match (`*` matches anything; `\` escapes).
fn pgpass(env: &StoreEnv, params: &BTreeMap<String, String>) -> Option<String> {
    let file = env.path_var("PGPASSFILE").unwrap_or_else(|| env.home().join(".pgpass"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).ok()?.permissions().mode();
        if mode & 0o077 != 0 {
            eprintln!("deja: {} is readable by group or others: ignored, as libpq does (chmod 0600 it)", file.display());
            return None;
        }
    }
    let text = std::fs::read_to_string(&file).ok()?;
    let host = params.get("host").map(String::as_str).unwrap_or("");
    // libpq matches a socket directory (or the default) as `localhost`.
    let host = if host.is_empty() || host.starts_with('/') { "localhost" } else { host.split(',').next().unwrap_or(host) };
    let port = params.get("port").map_or("5432", |p| p.split(',').next().unwrap_or("5432"));
    let want = [host, port, params.get("dbname").map_or("", String::as_str), params.get("user").map_or("", String::as_str)];
    for line in text.lines() {
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_pgpass(line);
        if fields.len() < 5 {
            continue;
        }
        if fields[..4].iter().zip(want).all(|(f, w)| f == "*" || f == w) {
            return Some(fields[4..].join(":"));
        }
    }
    None
}

fn split_pgpass(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut().expect("one field").extend(chars.next()),
            ':' => fields.push(String::new()),
            c => fields.last_mut().expect("one field").push(c),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)], home: &Path) -> StoreEnv {
        vars.iter().fold(StoreEnv::with_home(home), |e, (k, v)| e.set(k, *v))
    }

    #[test]
    fn urls_and_keyword_strings_read_alike() {
        let a = parse("postgres://al%40ice:s3cr%3At@db.example.com:6543/team?sslmode=verify-full&connect_timeout=3").unwrap();
        assert_eq!(a["user"], "al@ice");
        assert_eq!(a["password"], "s3cr:t");
        assert_eq!(a["host"], "db.example.com");
        assert_eq!(a["port"], "6543");
        assert_eq!(a["dbname"], "team");
        assert_eq!(a["sslmode"], "verify-full");
        let b = parse("host=db.example.com port=6543 user='al@ice' password='s3cr:t' dbname=team sslmode=verify-full connect_timeout=3")
            .unwrap();
        assert_eq!(a, b);
        assert!(parse("postgres://h/db?sslmod=require").unwrap_err().to_string().contains("sslmod"));
        assert!(parse("mysql://h/db").is_err());
        assert!(parse("host").is_err());
        assert_eq!(parse("postgres://[::1]:5433/x").unwrap()["host"], "::1");
    }

    #[test]
    fn the_password_never_reaches_the_settings() {
        assert_eq!(
            without_password("postgres://alice:pw@h:5/db?sslmode=require").unwrap(),
            ("postgres://alice@h:5/db?sslmode=require".into(), true)
        );
        assert_eq!(
            without_password("postgres://h/db?password=pw&sslmode=require").unwrap(),
            ("postgres://h/db?sslmode=require".into(), true)
        );
        assert_eq!(without_password("host=h password='a b' dbname=d").unwrap(), ("dbname=d host=h".into(), true));
        assert_eq!(without_password("postgres://alice@h/db").unwrap(), ("postgres://alice@h/db".into(), false));
    }

    #[test]
    fn service_file_environment_and_pgpass_fill_in_what_the_url_leaves_out() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join(".pg_service.conf"), "# team\n[team]\nhost=svc.example\nport=7000\ndbname=svcdb\n").unwrap();
        let pass = tmp.path().join(".pgpass");
        std::fs::write(&pass, "other:*:*:*:nope\nsvc.example:7000:svcdb:bob:pa\\:ss\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&pass, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let e = env(&[("PGSERVICE", "team"), ("PGUSER", "bob"), ("PGPORT", "9999")], tmp.path());
        let t = Target::resolve(&e, "postgres:///?sslmode=disable").unwrap();
        assert_eq!(t.params["host"], "svc.example");
        assert_eq!(t.params["port"], "7000", "the service file comes before the environment");
        assert_eq!(t.params["user"], "bob");
        assert_eq!(t.params["password"], "pa:ss");
        assert_eq!(t.display(), "bob@svc.example:7000/svcdb");
        // PGPASSWORD comes before the file; a file others can read is ignored.
        let e = env(&[("PGSERVICE", "team"), ("PGUSER", "bob"), ("PGPASSWORD", "envpw")], tmp.path());
        assert_eq!(Target::resolve(&e, "").unwrap().params["password"], "envpw");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&pass, std::fs::Permissions::from_mode(0o644)).unwrap();
            let e = env(&[("PGSERVICE", "team"), ("PGUSER", "bob")], tmp.path());
            assert!(!Target::resolve(&e, "").unwrap().params.contains_key("password"));
        }
        let e = env(&[("PGSERVICE", "missing")], tmp.path());
        assert!(Target::resolve(&e, "").unwrap_err().to_string().contains("missing"));
    }
}
