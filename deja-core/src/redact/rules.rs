//! The redaction table: one [`Rule`] per kind of secret, in the order they are applied,
//! each with the text it must redact and near-misses it must leave alone (the unit
//! tests run every row). The shapes are the providers' published token formats; a
//! rule either matches a self-identifying token (a fixed prefix and length) or needs
//! the context that makes a value a secret (a header, a URL's userinfo, a command's
//! password flag, an assignment to a secret-ish name) and then redacts only the value.
//!
//! Conventions of a pattern:
//! - the secret is the group named `s` (or `s2`, `s3` in alternatives); without one
//!   the whole match is the secret. Everything else matched is kept;
//! - `\b` is an ASCII word boundary (the engine rewrites it), so non-ASCII text
//!   around a secret neither hides it nor slows the scan;
//! - whitespace inside a context is `[ \t]`: a value never runs onto the next line.
//!
//! To add a kind: add a row here (positive and near-miss cases included), run
//! `cargo test -p deja-core redact`, and add the kind to `docs/redaction.md` (a
//! test checks that every kind is listed there).

/// One kind of secret.
pub struct Rule {
    /// Appears in the replacement, `[redacted:<kind>]`.
    pub kind: &'static str,
    /// Any of these matches it (one regex each; see the module doc).
    pub patterns: &'static [&'static str],
    /// A second look at a candidate secret, given the secret and the text after it:
    /// `false` leaves it in place (a type name, a variable reference, prose…).
    pub check: Option<fn(&str, &str) -> bool>,
    /// Lower-case words one of which every match contains, whatever its case: a
    /// cheap test (a SIMD substring scan of the lower-cased text) run before patterns
    /// whose case-insensitive or unanchored start gives the regex engine no literal
    /// of its own to scan for. Empty when the pattern has one (`ghp_`, `-----BEGIN`).
    pub needles: &'static [&'static str],
    /// `(input, what redaction makes of it)`.
    #[cfg_attr(not(any(test, feature = "testkit")), allow(dead_code))]
    pub hits: &'static [(&'static str, &'static str)],
    /// Text that looks close but holds no secret: left exactly as it is.
    #[cfg_attr(not(test), allow(dead_code))]
    pub misses: &'static [&'static str],
}

// ------------------------------------------------------------------ shared pieces

/// The body of a PEM block whose END line is missing (a truncated paste): base64
/// lines and `Header: value` lines, raw or JSON-escaped newlines between them.
macro_rules! pem_body {
    () => {
        r"(?:(?:\r?\n|\\r\\n|\\n|[ \t])+(?:[A-Za-z0-9+/=]{16,}|[A-Za-z][A-Za-z-]*:[^\r\n\\]*))*(?:(?:\r?\n|\\n|[ \t])+[A-Za-z0-9+/=]+)?"
    };
}

/// What lies between a PEM block's BEGIN and END lines: anything without five dashes
/// in a row, so the search for the END line stops at the next `-----` (a paste of many
/// BEGIN lines without END costs one pass, not one per line).
macro_rules! pem_inner {
    () => {
        r"(?:[^-]|-{1,4}[^-])*?"
    };
}

/// A URL's userinfo from just after `://`: a user (maybe empty), `:`, and the password
/// as the group `s`. People write passwords unencoded, `/` and `@` included, so the
/// password runs to the last `@` before the host: the first `@` after which the text up
/// to the next `/` (or the URL's end) holds no other `@`. Without a `/` in the password
/// that is the last `@` before the path, as it always was; with one, a port followed by
/// a path with an `@` in it (`host:8080/u/bob@example.com`) also fits, and
/// [`is_url_password`] turns it away.
macro_rules! url_password {
    () => {
        r#"[^\s/@:"'<>\[\]]*:(?P<s>[^\s"'<>]+?)@[^\s"'<>@/]*(?:[/\s"'<>]|$)"#
    };
}

/// A name whose value is a secret (case-insensitive, the last word of the name).
macro_rules! secret_name {
    () => {
        r"(?:password|passwd|passphrase|secret|token|api[_.-]?key|apikey|access[_.-]?key|secret[_.-]?key|private[_.-]?key|signing[_.-]?key|encryption[_.-]?key|master[_.-]?key|auth[_.-]?key|session[_.-]?key|license[_.-]?key|app[_.-]?key|client[_.-]?secret|credentials?|key[_.-]?base|(?-i:[A-Z0-9_]*[A-Z0-9]_(?:PASS|PWD|PW|AUTH|KEY)))"
    };
}

/// The separator of an assignment: `=`, `:`, `:=`, `=>`, after an optional closing
/// quote of the name (JSON, YAML, TOML, env, shell, Go, PHP, Ruby).
macro_rules! assign {
    () => {
        r#"\\?["']?[ \t]*(?::=|=>|=|:)[ \t]*"#
    };
}

/// An assigned value: quoted (up to the closing quote) or bare.
macro_rules! value {
    () => {
        r#"(?:\\?"(?P<s>[^"\\\r\n]+)|'(?P<s2>[^'\r\n]+)|(?P<s3>[^\s"'`,;&|<>(){}\[\]\\]{3,}))"#
    };
}

/// A command-line value: quoted or one word.
macro_rules! arg {
    () => {
        r#"(?P<s>"[^"\r\n]*"|'[^'\r\n]*'|[^\s"'|;&<>()-][^\s"'|;&<>()]*)"#
    };
}

/// Text up to the flag within the same command (not past a pipe, `;` or `&`).
macro_rules! same_command {
    () => {
        r"[^\r\n|;&]*?[ \t]"
    };
}

// ------------------------------------------------------------------ checks

/// Values that name a type, a placeholder or nothing, rather than being a secret.
const NOT_SECRETS: &[&str] = &[
    "***",
    "<redacted>",
    "any",
    "api_key",
    "apikey",
    "async",
    "await",
    "function",
    "input",
    "lambda",
    "new",
    "require",
    "self",
    "this",
    "yield",
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "usize",
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "isize",
    "f32",
    "f64",
    "char",
    "float",
    "double",
    "long",
    "byte",
    "vec",
    "dict",
    "list",
    "map",
    "uuid",
    "url",
    "path",
    "pathbuf",
    "bool",
    "boolean",
    "bytes",
    "credential",
    "credentials",
    "empty",
    "example",
    "false",
    "hidden",
    "int",
    "integer",
    "masked",
    "no",
    "none",
    "null",
    "nil",
    "number",
    "object",
    "off",
    "on",
    "optional",
    "password",
    "private_key",
    "redacted",
    "required",
    "secret",
    "secret_key",
    "secretbox",
    "secretstr",
    "secretstring",
    "str",
    "string",
    "text",
    "token",
    "true",
    "undefined",
    "unknown",
    "unset",
    "value",
    "yes",
];

/// A value after a secret-ish name or flag is a secret unless it is a reference
/// (`$VAR`, `${{ … }}`, `<your-token>`, `%(x)s`), a code expression (`os.environ[…]`,
/// `get_token()`, `config.password`), a type (`str`, `Option<String>`), a
/// placeholder (`none`, `***`, `xxxxxx`) or a comparison (`== …`).
pub(super) fn is_value(secret: &str, after: &str) -> bool {
    let v = secret.trim().trim_matches(|c| c == '"' || c == '\'');
    let Some(first) = v.chars().next() else { return false };
    // `:` after the separator is a path (`Token::Eof`, `Password::new`), not a value.
    if matches!(first, '$' | '<' | '{' | '%' | '-' | '=' | '!' | '*' | '@' | ':') {
        return false;
    }
    if NOT_SECRETS.contains(&v.to_ascii_lowercase().as_str()) {
        return false;
    }
    if v.chars().all(|c| c == first) {
        return false;
    }
    // A bare value the code goes on to call, index or parameterise (but an XML
    // element's closing tag is no such thing).
    if after.starts_with(['(', '[', '<']) && !after.starts_with("</") {
        return false;
    }
    // `token: SessionToken,` or `(secret: ApiSecret)`: a type name in a signature.
    let camel = v.len() <= 40
        && v.starts_with(|c: char| c.is_ascii_uppercase())
        && v.chars().all(|c| c.is_ascii_alphabetic())
        && v.chars().any(|c| c.is_ascii_lowercase());
    if camel
        && (after.starts_with([')', ',', '>', ';', '|', '}'])
            || after.starts_with(" =")
            || after.starts_with(" |")
            || after.starts_with(" {"))
    {
        return false;
    }
    // `config.password`, `self.token`, `os.environ`: an identifier path without digits.
    let is_ident = |p: &str| {
        p.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let parts: Vec<&str> = v.split(['.', ':']).filter(|p| !p.is_empty()).collect();
    if parts.len() > 1 && parts.iter().all(|p| is_ident(p)) && !v.chars().any(|c| c.is_ascii_digit()) {
        return false;
    }
    true
}

/// A flag's value, as [`is_value`], and not a path (`--private-key ~/.ssh/id`).
pub(super) fn is_flag_value(secret: &str, after: &str) -> bool {
    let v = secret.trim_matches(|c| c == '"' || c == '\'');
    !(v.starts_with('/') || v.starts_with("~/") || v.starts_with("./") || v.starts_with("../")) && is_value(secret, after)
}

/// A URL's password as [`url_password!`] reads it, unless what it took is a port and a
/// path (`8080/users/bob` of `http://host:8080/users/bob@example.com`): the part before
/// its first `/` all digits, at most five. A password of up to five digits and then a `/`
/// is read as a port too and kept: nothing tells the two apart, and a port with a path
/// is by far the commoner.
pub(super) fn is_url_password(secret: &str, _after: &str) -> bool {
    match secret.split_once('/') {
        Some((head, _)) => !(head.len() <= 5 && !head.is_empty() && head.bytes().all(|b| b.is_ascii_digit())),
        None => true,
    }
}

/// Looks like a token rather than a word: letters and digits both.
pub(super) fn is_tokenish(secret: &str, _after: &str) -> bool {
    secret.bytes().any(|b| b.is_ascii_digit()) && secret.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Base64 of `user:password` (HTTP Basic, a Docker config's `auth`).
pub(super) fn is_credential_pair(secret: &str, _after: &str) -> bool {
    use base64::Engine as _;
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new().with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    let Ok(bytes) = engine.decode(secret.trim_end_matches('=')) else { return false };
    match std::str::from_utf8(&bytes) {
        Ok(s) => s.contains(':') && !s.starts_with(':') && s.chars().all(|c| !c.is_control()),
        Err(_) => false,
    }
}

/// A Discord bot token's first part is a base64 user id: it has digits.
pub(super) fn is_discord_token(secret: &str, _after: &str) -> bool {
    secret.split('.').next().is_some_and(|id| id.bytes().any(|b| b.is_ascii_digit()))
}

// ------------------------------------------------------------------ the table

pub static RULES: &[Rule] = &[
    // ---- private key blocks: everything between BEGIN and END goes.
    Rule {
        kind: "pgp_private_key",
        patterns: &[concat!(r"-----BEGIN PGP PRIVATE KEY BLOCK-----(?:", pem_inner!(), r"-----END PGP PRIVATE KEY BLOCK-----|", pem_body!(), ")")],
        check: None,
        needles: &[],
        hits: &[(
            "key:\n-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\nlQOYBF0123456789abcdefABCDEF\n=Xy12\n-----END PGP PRIVATE KEY BLOCK-----\nimported",
            "key:\n[redacted:pgp_private_key]\nimported",
        )],
        misses: &["-----BEGIN PGP PUBLIC KEY BLOCK-----\nmQINBF0123456789abcdef\n-----END PGP PUBLIC KEY BLOCK-----"],
    },
    Rule {
        kind: "ssh_private_key",
        patterns: &[
            concat!(r"-----BEGIN OPENSSH PRIVATE KEY-----(?:", pem_inner!(), r"-----END OPENSSH PRIVATE KEY-----|", pem_body!(), ")"),
            r"(?P<pre>Private-Lines: [0-9]+(?:\r?\n|\\n))(?P<s>[A-Za-z0-9+/=]{4,}(?:(?:\r?\n|\\n)[A-Za-z0-9+/=]{16,})*)",
        ],
        check: None,
        needles: &[],
        hits: &[
            (
                "cat id_ed25519\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n$ ls",
                "cat id_ed25519\n[redacted:ssh_private_key]\n$ ls",
            ),
            (
                "Private-Lines: 1\nAAAAIGV4YW1wbGVrZXlkYXRhZXhhbXBsZQ==\nPrivate-MAC: 0a1b",
                "Private-Lines: 1\n[redacted:ssh_private_key]\nPrivate-MAC: 0a1b",
            ),
        ],
        misses: &[
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl me@laptop",
            "~/.ssh/id_ed25519.pub",
        ],
    },
    Rule {
        kind: "private_key",
        patterns: &[concat!(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:",
            pem_inner!(),
            r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|",
            pem_body!(),
            ")"
        )],
        check: None,
        needles: &[],
        hits: &[
            (
                "key -----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY----- done",
                "key [redacted:private_key] done",
            ),
            (
                r#"{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n", "client_email": "a@b.iam.gserviceaccount.com"}"#,
                r#"{"type": "service_account", "private_key": "[redacted:private_key]\n", "client_email": "a@b.iam.gserviceaccount.com"}"#,
            ),
            (
                "truncated: -----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIIrYSSNQFaA2Hwf1duRSxKtLYX5CB04fSeQ6tF1aY/PuoAoGCCqGSM49\nAwEHoUQDQgAE\n\nthat was all",
                "truncated: [redacted:private_key]\n\nthat was all",
            ),
        ],
        misses: &[
            "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
            "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n-----END CERTIFICATE-----",
            "openssl genpkey -algorithm ed25519 -out private_key.pem",
        ],
    },
    Rule {
        kind: "age_secret_key",
        patterns: &[r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b"],
        check: None,
        needles: &[],
        hits: &[(
            "# key: AGE-SECRET-KEY-17LR7AFL0L2Q25ALJAHM6YTHPPZ4X7LFZD6G4XH47DJM4MSRJJKLE43KDL8 end",
            "# key: [redacted:age_secret_key] end",
        )],
        misses: &["age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p"],
    },
    Rule {
        kind: "jwt",
        patterns: &[r"\beyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]*"],
        check: None,
        needles: &[],
        hits: &[
            ("tok eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N", "tok [redacted:jwt]"),
            ("SUPABASE_SERVICE_ROLE=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoic2VydmljZV9yb2xlIn0.", "SUPABASE_SERVICE_ROLE=[redacted:jwt]"),
        ],
        misses: &["fix the flaky jwt refresh test", "the header eyJhbGciOiJIUzI1NiJ9 decodes to {\"alg\":\"HS256\"}"],
    },
    // ---- self-identifying tokens: a provider's prefix and length.
    Rule {
        kind: "aws_secret_key",
        patterns: &[
            r#"(?i)\baws[_.-]?(?:secret[_.-]?(?:access[_.-]?)?key|session[_.-]?token)\\?["']?[ \t]*(?::=|=>|=|:)[ \t]*\\?["']?(?P<s>[A-Za-z0-9/+=]{16,})"#,
            r#"\b(?:AKIA|ASIA)[A-Z0-9]{16}["']?[ \t]*[,;:|\t][ \t]*["']?(?P<s>[A-Za-z0-9/+]{40})\b"#,
            r"(?i)\baws[_.-]?secret[_.-]?access[_.-]?key[ \t]+(?P<s>[A-Za-z0-9/+=]{40})\b",
        ],
        check: None,
        needles: &["aws", "akia", "asia"],
        hits: &[
            ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = [redacted:aws_secret_key]"),
            (
                "aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "aws configure set aws_secret_access_key [redacted:aws_secret_key]",
            ),
            (
                "ci,AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "ci,[redacted:aws_key],[redacted:aws_secret_key]",
            ),
        ],
        misses: &["commit 9fceb02d0ae598e95dc970b74767f19372d61af8 and aws_region = us-east-1"],
    },
    Rule {
        kind: "aws_key",
        patterns: &[r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}\b"],
        check: None,
        needles: &[],
        hits: &[("id AKIAIOSFODNN7EXAMPLE ok", "id [redacted:aws_key] ok"), ("ASIAY34FZKBOKMUTVV7A", "[redacted:aws_key]")],
        misses: &["AKIA1234 is too short", "AKIAIOSFODNN7EXAMPLEAND_MORE", "ABCDEFGHIJKLMNOPQRST"],
    },
    Rule {
        kind: "github_fine_grained_token",
        patterns: &[r"github_pat_[A-Za-z0-9_]{36,255}"],
        check: None,
        needles: &[],
        hits: &[(
            "use 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 now",
            "use [redacted:github_fine_grained_token] now",
        )],
        misses: &["fine-grained tokens start with github_pat_ and are longer", "github_pat_prefix_check"],
    },
    Rule {
        kind: "github_token",
        patterns: &[r"\bgh[pousr]_[A-Za-z0-9]{36,251}\b"],
        check: None,
        needles: &[],
        hits: &[
            ("gh ghp_abcdefghijklmnopqrstuvwxyz0123456789", "gh [redacted:github_token]"),
            ("Authorization: token ghs_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d", "Authorization: token [redacted:github_token]"),
        ],
        misses: &["ghp_short123", "gh_pr_checkout --branch ghp_ui_fix"],
    },
    Rule {
        kind: "gitlab_token",
        patterns: &[r"\bgl(?:pat|dt|rt|ptt|ft|imt|cbt|oas|soat|agent|ffct|wt)-[A-Za-z0-9_.-]{20,}", r"\bGR1348941[A-Za-z0-9_-]{20,}"],
        check: None,
        needles: &[],
        hits: &[
            ("GITLAB=glpat-JKY40uvSwMFLZDe1f8rE", "GITLAB=[redacted:gitlab_token]"),
            ("runner glrt-t1_u8jzPde0IgxLd6GncfBA registered", "runner [redacted:gitlab_token] registered"),
        ],
        misses: &["create a glpat-xxxx token in settings", "gldt-short"],
    },
    Rule {
        kind: "slack_webhook",
        patterns: &[r"(?P<pre>hooks\.slack\.com/)(?P<s>(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{8,})"],
        check: None,
        needles: &[],
        hits: &[(
            "curl -X POST https://hooks.slack.com/services/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 -d @msg.json",
            "curl -X POST https://hooks.slack.com/[redacted:slack_webhook] -d @msg.json",
        )],
        misses: &["see https://api.slack.com/messaging/webhooks and https://hooks.slack.com/"],
    },
    Rule {
        kind: "slack_token",
        patterns: &[r"\b(?:xox[abposrec]|xoxe\.xox[bp]|xapp)-[A-Za-z0-9-]{10,}"],
        check: None,
        needles: &[],
        hits: &[
            ("slack xoxb-1234567890-abcdef", "slack [redacted:slack_token]"),
            ("SLACK_APP=xapp-1-A0123BCDE-4567890123-abcdef0123456789", "SLACK_APP=[redacted:slack_token]"),
        ],
        misses: &["xoxo-gossip", "xoxb- prefixed tokens are bot tokens"],
    },
    Rule {
        kind: "discord_webhook",
        patterns: &[r"(?:discord|discordapp)\.com/api/webhooks/(?P<s>[0-9]{5,}/[A-Za-z0-9_-]{20,})"],
        check: None,
        needles: &["/api/webhooks/"],
        hits: &[(
            "POST https://discord.com/api/webhooks/123456789012345678/u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d-abc",
            "POST https://discord.com/api/webhooks/[redacted:discord_webhook]",
        )],
        misses: &["https://discord.com/developers/docs/resources/webhook"],
    },
    Rule {
        kind: "discord_token",
        patterns: &[r"\b[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}\b"],
        check: Some(is_discord_token),
        needles: &[],
        hits: &[("bot.run('MTk4NjIyNDgzNDcxOTI1MjQ4.dfrfif.iUziXnFAAoeelK9mqmALOR2HcSG')", "bot.run('[redacted:discord_token]')")],
        misses: &["MainActivityViewModelTests.create.shouldReturnTheRightStateWhenEmpty"],
    },
    Rule {
        kind: "stripe_key",
        patterns: &[r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{20,247}\b", r"\bwhsec_[A-Za-z0-9]{24,}\b"],
        check: None,
        needles: &[],
        hits: &[
            ("STRIPE_KEY=sk_live_SQedUStPKR0CsTy4Qwb8DwkN done", "STRIPE_KEY=[redacted:stripe_key] done"),
            ("restricted rk_live_hFdnXsiVpzz63FfkCzJr4i0B", "restricted [redacted:stripe_key]"),
            ("stripe.api_key = 'sk_test_3JrTAwR4y9ojfljoQoaF1Llq'", "stripe.api_key = '[redacted:stripe_key]'"),
            ("whsec_oNlkgtqJ09bbg7SVmqb1MOKDHpSCgw3g", "[redacted:stripe_key]"),
        ],
        misses: &["pk_live_51HqLyjWDarjtT1zdp7dc is publishable", "sk_test_fixture", "run sk_test_helpers"],
    },
    Rule {
        kind: "openai_key",
        patterns: &[r"\bsk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}", r"\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b"],
        check: None,
        needles: &[],
        hits: &[
            ("use sk-proj-abcdefghijklmnopqrstuvwx now", "use [redacted:openai_key] now"),
            ("legacy 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", "legacy [redacted:openai_key]"),
        ],
        misses: &["sk-proj-readme", "sk-svcacct keys belong to service accounts"],
    },
    Rule {
        kind: "anthropic_key",
        patterns: &[r"\bsk-ant-[A-Za-z0-9_-]{20,}"],
        check: None,
        needles: &[],
        hits: &[(
            "ANTHROPIC=sk-ant-api03-nRH9ucAUsdMlHUvTCQCyEZDz_TddJ8HyS5SUkCnD8zRA9a9SkpXz9w3QlY7Zkuvqdt7s8Stqcbnr3yBdGBLEPH1qhT61qAA",
            "ANTHROPIC=[redacted:anthropic_key]",
        )],
        misses: &["sk-ant-api03 is the key version", "sk-ant-"],
    },
    Rule {
        kind: "openrouter_key",
        patterns: &[r"\bsk-or-(?:v1-)?[A-Za-z0-9]{32,}"],
        check: None,
        needles: &[],
        hits: &[(
            "OPENROUTER: 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",
            "OPENROUTER: [redacted:openrouter_key]",
        )],
        misses: &["sk-or-v1-short"],
    },
    Rule {
        kind: "groq_key",
        patterns: &[r"\bgsk_[A-Za-z0-9]{40,}"],
        check: None,
        needles: &[],
        hits: &[("key 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", "key [redacted:groq_key]")],
        misses: &["gsk_test_suite"],
    },
    Rule {
        kind: "xai_key",
        patterns: &[r"\bxai-[A-Za-z0-9]{60,}"],
        check: None,
        needles: &[],
        hits: &[(
            "XAI=xai-RlrwZbqcabUGJmGEp7CgQ0PBQFI14zGtSnovm14TUOizwd1iaeOV4qBkdfQ1y3GQsMpSscDlkrCaqx9v",
            "XAI=[redacted:xai_key]",
        )],
        misses: &["model xai-grok-2-latest"],
    },
    Rule {
        kind: "perplexity_key",
        patterns: &[r"\bpplx-[A-Za-z0-9]{48}\b"],
        check: None,
        needles: &[],
        hits: &[("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", "[redacted:perplexity_key]")],
        misses: &["pplx-7b-online"],
    },
    Rule {
        kind: "replicate_token",
        patterns: &[r"\br8_[A-Za-z0-9]{37}\b"],
        check: None,
        needles: &[],
        hits: &[("REPLICATE r8_maeSUHA1U6dHZwvs1O38FfaA6WEi3QrplK1xc", "REPLICATE [redacted:replicate_token]")],
        misses: &["r8_register"],
    },
    Rule {
        kind: "sk_api_key",
        patterns: &[r"\bsk-[A-Za-z0-9]{20,}\b"],
        check: None,
        needles: &[],
        hits: &[
            ("DEEPSEEK_KEY: sk-ba2b0aee0ca923732881584d8c4fa281", "DEEPSEEK_KEY: [redacted:sk_api_key]"),
            ("moonshot sk-u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d end", "moonshot [redacted:sk_api_key] end"),
        ],
        misses: &["pip install sk-learn", "sk-abc123def456", "risk-assessment-2024-quarterly-report", "sk-spinner-fading-circle"],
    },
    Rule {
        kind: "huggingface_token",
        patterns: &[r"\b(?:hf|api_org)_[A-Za-z0-9]{30,}\b"],
        check: None,
        needles: &[],
        hits: &[("huggingface-cli login --token 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", "huggingface-cli login --token [redacted:huggingface_token]")],
        misses: &["from huggingface_hub import hf_hub_download", "HF_TOKEN is read from the env"],
    },
    Rule {
        kind: "npm_token",
        patterns: &[r"\bnpm_[A-Za-z0-9]{36,}\b"],
        check: None,
        needles: &[],
        hits: &[(
            "//registry.npmjs.org/:_authToken=npm_fL9H2WjQ5TY4MyWuUFjsUNPjc01T5GOBUSZG",
            "//registry.npmjs.org/:_authToken=[redacted:npm_token]",
        )],
        misses: &["npm_config_registry=https://registry.npmjs.org/", "echo $npm_package_version"],
    },
    Rule {
        kind: "pypi_token",
        patterns: &[r"\bpypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{40,}"],
        check: None,
        needles: &[],
        hits: &[(
            "twine upload -u __token__ pypi-AgEIcHlwaS5vcmcrcDkdfrUnW5gcF-Ha6ili8GjHEAD6_Wj9KfzjsQGMrb9h-ImB-LK777pzNk8",
            "twine upload -u __token__ [redacted:pypi_token]",
        )],
        misses: &["pip install pypi-simple"],
    },
    Rule {
        kind: "docker_hub_token",
        patterns: &[r"\bdckr_(?:pat|oat)_[A-Za-z0-9_-]{20,}"],
        check: None,
        needles: &[],
        hits: &[("DOCKERHUB dckr_pat_cL6j5IXAAjlsHUqJoUD_-Ydua-5", "DOCKERHUB [redacted:docker_hub_token]")],
        misses: &["dckr_pat_ tokens are personal"],
    },
    Rule {
        kind: "gcp_api_key",
        patterns: &[r"\bAIza[0-9A-Za-z_-]{35}"],
        check: None,
        needles: &[],
        hits: &[("maps?key=AIzaZMs1SWOpQaPRYpzbLGViYXjU2JgJngKtFI3&q=x", "maps?key=[redacted:gcp_api_key]&q=x")],
        misses: &["AIzaWord"],
    },
    Rule {
        kind: "google_oauth",
        patterns: &[r"\bGOCSPX-[A-Za-z0-9_-]{28}", r"\bya29\.[A-Za-z0-9_-]{20,}", r"\b1//0[A-Za-z0-9_-]{40,}"],
        check: None,
        needles: &[],
        hits: &[
            ("client_secret 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", "client_secret [redacted:google_oauth]"),
            ("access ya29.YpvujA_C5Q52ryFlwRlOEVHzc0X0AWIRh_JUqBlIFXZ53Ncqe28-ajY75FnC ok", "access [redacted:google_oauth] ok"),
        ],
        misses: &["ya29 is the access-token prefix", "x = 1//0"],
    },
    Rule {
        kind: "gcp_service_account",
        patterns: &[r#""private_key_id"[ \t]*:[ \t]*"(?P<s>[a-f0-9]{40})""#],
        check: None,
        needles: &[],
        hits: &[(
            r#"{"project_id": "demo", "private_key_id": "443e210471948d33296c87009e8a7f770d9106fd"}"#,
            r#"{"project_id": "demo", "private_key_id": "[redacted:gcp_service_account]"}"#,
        )],
        misses: &[r#"{"client_id": "103582738453215948562", "project_id": "my-proj"}"#],
    },
    Rule {
        kind: "azure_storage_key",
        patterns: &[r"(?i)\b(?:AccountKey|SharedAccessKey)[ \t]*=[ \t]*(?P<s>[A-Za-z0-9+/]{20,}={0,2})"],
        check: None,
        needles: &["accountkey", "sharedaccesskey"],
        hits: &[(
            "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=FEE6qmzsXjp+CLJWt2tcrmUyAcxKvdiBETR++DNPxNExO3c4Q8LjSxvzn36cL+U5fGrpqg7ymCXsZA02BvmYJA==;EndpointSuffix=core.windows.net",
            "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=[redacted:azure_storage_key];EndpointSuffix=core.windows.net",
        )],
        misses: &["AccountName=devstoreaccount1;AccountKey=;", "the AccountKey setting"],
    },
    Rule {
        kind: "azure_sas",
        patterns: &[
            r"(?i)\bSharedAccessSignature[ \t]*=[ \t]*(?P<s>[^;\s]+)",
            r"(?i)\bSharedAccessSignature[ \t]+(?P<s>sr=[^\s]+)",
            r"(?i)[?&;]sig=(?P<s>[A-Za-z0-9%+/=_-]{16,})",
        ],
        check: None,
        needles: &["sharedaccesssignature", "sig="],
        hits: &[
            (
                "BlobEndpoint=https://acme.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&sig=abcDEF0123456789abcdef%3D",
                "BlobEndpoint=https://acme.blob.core.windows.net/;SharedAccessSignature=[redacted:azure_sas]",
            ),
            (
                "GET https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&se=2026-01-01&sr=b&sp=r&sig=u8jzPde0IgxLd6GncfBAepfJ%2BBd0Kh8o%3D",
                "GET https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&se=2026-01-01&sr=b&sp=r&sig=[redacted:azure_sas]",
            ),
        ],
        misses: &["generate a SharedAccessSignature in the portal", "?sig=short"],
    },
    Rule {
        kind: "azure_client_secret",
        patterns: &[r"[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}"],
        check: None,
        needles: &["q~"],
        hits: &[("AZURE_CLIENT_SECRET hnb8Q~zs0z.1w-NiMg9aW37k5wCnHDepQHgI3HLB here", "AZURE_CLIENT_SECRET [redacted:azure_client_secret] here")],
        misses: &["abc1Q~short"],
    },
    Rule {
        kind: "twilio_key",
        patterns: &[r"\bSK[0-9a-fA-F]{32}\b"],
        check: None,
        needles: &[],
        hits: &[("TWILIO_API_KEY_SID: SKd115cea325a65e19cbae530282bd36cb", "TWILIO_API_KEY_SID: [redacted:twilio_key]")],
        misses: &["account AC0123456789abcdef0123456789abcdef", "SKd115cea325a65e19cbae530282bd36c"],
    },
    Rule {
        kind: "sendgrid_key",
        patterns: &[r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"],
        check: None,
        needles: &[],
        hits: &[(
            "sendgrid 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 ok",
            "sendgrid [redacted:sendgrid_key] ok",
        )],
        misses: &["SG.module.name"],
    },
    Rule {
        kind: "mailgun_key",
        patterns: &[r"\bkey-[0-9a-f]{32}\b"],
        check: None,
        needles: &[],
        hits: &[
            ("api:key-a5d328263dfe574de739988b886e7577", "api:[redacted:mailgun_key]"),
        ],
        misses: &["key-value store", "id 123e4567-e89b-12d3-a456-426614174000"],
    },
    Rule {
        kind: "mailchimp_key",
        patterns: &[r"\b[0-9a-f]{32}-us[0-9]{1,2}\b"],
        check: None,
        needles: &["-us"],
        hits: &[("mailchimp 496a2c8773e130f7eb19731662b5e803-us14", "mailchimp [redacted:mailchimp_key]")],
        misses: &["md5 d41d8cd98f00b204e9800998ecf8427e"],
    },
    Rule {
        kind: "shopify_token",
        patterns: &[r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"],
        check: None,
        needles: &[],
        hits: &[("X-Shopify-Access-Token: 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", "X-Shopify-Access-Token: [redacted:shopify_token]")],
        misses: &["shpat_ tokens are admin tokens"],
    },
    Rule {
        kind: "digitalocean_token",
        patterns: &[r"\bdo[opr]_v1_[a-f0-9]{64}\b"],
        check: None,
        needles: &[],
        hits: &[(
            "doctl auth init -t dop_v1_99d19bdd0b6cc60d5d32cbe54014c2b54b95523cf6941fa1c257c6f561c5cb34",
            "doctl auth init -t [redacted:digitalocean_token]",
        )],
        misses: &["sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
    },
    Rule {
        kind: "heroku_key",
        patterns: &[r"\bHRKU-[A-Za-z0-9_-]{20,}"],
        check: None,
        needles: &[],
        hits: &[("heroku HRKU-AAFyfePpX6N1NF2XV54wca-7E56w8ZniqT3Ul4ffqkOkgWrdioyq-KvCiSGu", "heroku [redacted:heroku_key]")],
        misses: &["HRKU-AA tokens"],
    },
    Rule {
        kind: "vercel_token",
        patterns: &[r"\bvc[pikar]_[A-Za-z0-9]{24,}\b"],
        check: None,
        needles: &[],
        hits: &[("vercel --token vcp_u5Nr50DjqG96EnLqNGpuxcmlzkO7rRu5ykYYqhXHdO2x93CJHLS45gqI", "vercel --token [redacted:vercel_token]")],
        misses: &["vcs_info and vcp_short"],
    },
    Rule {
        kind: "supabase_key",
        patterns: &[r"\bsbp_[a-f0-9]{40}\b", r"\bsb_secret_[A-Za-z0-9_-]{20,}"],
        check: None,
        needles: &[],
        hits: &[
            ("supabase login --token sbp_cb8cb4ba2e751989a01749ddb14f71010b93b7d9", "supabase login --token [redacted:supabase_key]"),
            ("sb_secret_rAU8urbFt5misIZHbhS4_FvafhdZxEu", "[redacted:supabase_key]"),
        ],
        misses: &["sb_publishable_rAU8urbFt5misIZHbhS4_Fvafh is public"],
    },
    Rule {
        kind: "databricks_token",
        patterns: &[r"\bdapi[a-f0-9]{32}(?:-[0-9]+)?\b"],
        check: None,
        needles: &[],
        hits: &[("DATABRICKS dapia6a9421cc1c93016f1c4261e5351d30b", "DATABRICKS [redacted:databricks_token]")],
        misses: &["dapi is the prefix"],
    },
    Rule {
        kind: "doppler_token",
        patterns: &[r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}\b"],
        check: None,
        needles: &[],
        hits: &[("doppler dp.pt.30iYtJTq3tlAcubBKPL76dFKHc0hXZAKS6zCeaRyML8", "doppler [redacted:doppler_token]")],
        misses: &["dp.pt.short"],
    },
    Rule {
        kind: "pulumi_token",
        patterns: &[r"\bpul-[a-f0-9]{40}\b"],
        check: None,
        needles: &[],
        hits: &[("PULUMI pul-4fd32f640d0032634f087e51b429fe8110102c99", "PULUMI [redacted:pulumi_token]")],
        misses: &["pul-request"],
    },
    Rule {
        kind: "postman_key",
        patterns: &[r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b"],
        check: None,
        needles: &[],
        hits: &[("PMAK-5f1abef543b5dfce8a981a04-9d7ccc7e90a88d519448fb2fc6791ce680", "[redacted:postman_key]")],
        misses: &["PMAK-123"],
    },
    Rule {
        kind: "grafana_token",
        patterns: &[r"\bglc_[A-Za-z0-9+/]{32,}={0,2}", r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b"],
        check: None,
        needles: &[],
        hits: &[("GRAFANA glc_X6lTiDYHP9zyBylxLUTZtFf/VnV7ktOdSJcmeA+B end", "GRAFANA [redacted:grafana_token] end")],
        misses: &["glc_short"],
    },
    Rule {
        kind: "newrelic_key",
        patterns: &[r"\bNR(?:AK|II|JS)-[A-Za-z0-9]{19,32}\b"],
        check: None,
        needles: &[],
        hits: &[("NEW_RELIC NRAK-QR1G2IQCVMLYFBDC9X35EZHFQUO", "NEW_RELIC [redacted:newrelic_key]")],
        misses: &["NRAK-"],
    },
    Rule {
        kind: "terraform_token",
        patterns: &[r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}"],
        check: None,
        needles: &[".atlasv1."],
        hits: &[(
            "token = Pf96QGzlC2kx9p.atlasv1.CweGThdgH9hmsOazM4n8PVGXpV9Wv4Esb7yeuCjVr5mXcj5RPD9oUsQChx5s4tI1",
            "token = [redacted:terraform_token]",
        )],
        misses: &["app.terraform.io.atlasv1"],
    },
    Rule {
        kind: "linear_key",
        patterns: &[r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b"],
        check: None,
        needles: &[],
        hits: &[("LINEAR lin_api_7sdTWx6uX9MGE2sNVbYAbBHXgwETdIKnT30fK0sk", "LINEAR [redacted:linear_key]")],
        misses: &["lin_api_docs"],
    },
    Rule {
        kind: "atlassian_token",
        patterns: &[r"\bAT(?:ATT|CTT)3[A-Za-z0-9_=-]{100,}"],
        check: None,
        needles: &[],
        hits: &[(
            "jira ATATT3xFfGF03azKgaS-m-x_SHuKBD_vok-nPTmZYl2dVAMH2=vWD6qeSPt5Pv74GDqQ7E=yIMttFPSuEPyHnvnzXtsMM3JznnJAX7ebZ3C=L7csGZaF31DDxp63OHm1FZuG296c0xPbX end",
            "jira [redacted:atlassian_token] end",
        )],
        misses: &["ATATT3 prefix"],
    },
    Rule {
        kind: "sentry_token",
        patterns: &[r"\bsntry[su]_[A-Za-z0-9+/=_]{40,}"],
        check: None,
        needles: &[],
        hits: &[("SENTRY sntrys_7Lq8TDIWG2x9aJTFMP9+2kUtMXhkPrSbbAjLGmsDx5StAZvlMz/Bk4opH1Dr", "SENTRY [redacted:sentry_token]")],
        misses: &["sntrys_ tokens"],
    },
    Rule {
        kind: "square_token",
        patterns: &[r"\bsq0(?:atp|csp)-[A-Za-z0-9_-]{22,43}"],
        check: None,
        needles: &[],
        hits: &[("square sq0atp-0FtdILQvH-nO69othB9KpG", "square [redacted:square_token]")],
        misses: &["sq0atp-"],
    },
    Rule {
        kind: "notion_token",
        patterns: &[r"\b(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})\b"],
        check: None,
        needles: &[],
        hits: &[
            ("NOTION secret_C3J27XDCG2LmlZGEONYlgCtjfIZ4SOcMz9CPVNPkNa1", "NOTION [redacted:notion_token]"),
            ("ntn_Hedcm4pMbXDuCL1mHoOsFaQfDPrAJ71fTquWoGsbeKXgzg", "[redacted:notion_token]"),
        ],
        misses: &["secret_key_base and secret_manager_client"],
    },
    Rule {
        kind: "airtable_token",
        patterns: &[r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b"],
        check: None,
        needles: &[],
        hits: &[(
            "AIRTABLE pat2sye9b2Rann76d.fccd268a29a0d347301ef56e64dc3cd6089065c3146e80a9c222670bbe4f4c54",
            "AIRTABLE [redacted:airtable_token]",
        )],
        misses: &["path.join(a, b)"],
    },
    Rule {
        kind: "fly_token",
        patterns: &[r"\bfm[12][ar]?_[A-Za-z0-9+/=_-]{32,}"],
        check: None,
        needles: &[],
        hits: &[("Authorization: FlyV1 fm2_NDFyuzX9k1gnneGEYG1+LwiqD9jJBAciI05FhfwKVqlUr5Qrec8TNecj9iNO", "Authorization: FlyV1 [redacted:fly_token]")],
        misses: &["fm2_short"],
    },
    Rule {
        kind: "netlify_token",
        patterns: &[r"\bnf[pcuo]_[A-Za-z0-9]{36,}\b"],
        check: None,
        needles: &[],
        hits: &[("netlify deploy --auth nfp_ieeCIxVc57VVTiY96vwfRE5e32A8Yb3FKaNQ", "netlify deploy --auth [redacted:netlify_token]")],
        misses: &["nfp_config"],
    },
    Rule {
        kind: "render_key",
        patterns: &[r"\brnd_[A-Za-z0-9]{32}\b"],
        check: None,
        needles: &[],
        hits: &[("RENDER rnd_yyLaMeffOhq4AUvy7VSLDCD1IfHWGbtM", "RENDER [redacted:render_key]")],
        misses: &["rnd_seed = 42"],
    },
    Rule {
        kind: "planetscale_token",
        patterns: &[r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,64}"],
        check: None,
        needles: &[],
        hits: &[("pscale_tkn_fEbo9ShFXNQ6Fq5axtjRNmHkW5vQ7CF5puzQqmOBZZW", "[redacted:planetscale_token]")],
        misses: &["pscale_tkn_ prefix"],
    },
    Rule {
        kind: "langsmith_key",
        patterns: &[r"\blsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}\b"],
        check: None,
        needles: &[],
        hits: &[("LANGSMITH 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", "LANGSMITH [redacted:langsmith_key]")],
        misses: &["lsv2_pt_ keys"],
    },
    Rule {
        kind: "pinecone_key",
        patterns: &[r"\bpcsk_[A-Za-z0-9_]{40,}"],
        check: None,
        needles: &[],
        hits: &[("PINECONE pcsk_OhCgO_IPOZx9eRmm0EqlTaWEITclorXwIS8HGNWkz2YS5ofA75UyiCDmO46ayJKP4G", "PINECONE [redacted:pinecone_key]")],
        misses: &["pcsk_ keys"],
    },
    Rule {
        kind: "tavily_key",
        patterns: &[r"\btvly-(?:dev-|prod-)?[A-Za-z0-9]{20,}"],
        check: None,
        needles: &[],
        hits: &[("TAVILY 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", "TAVILY [redacted:tavily_key]")],
        misses: &["tvly-python"],
    },
    Rule {
        kind: "mapbox_token",
        patterns: &[r"\bsk\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"],
        check: None,
        needles: &[],
        hits: &[("MAPBOX sk.eyJ1IjoiZGVtbyIsImEiOiJwGfcCvJAXrF6bnZ3eBZc.wQr8t4_lC4LvGNWAMsI_z0", "MAPBOX [redacted:mapbox_token]")],
        misses: &["pk.eyJ1IjoiZGVtbyIsImEiOiJwGfcCvJAXrF6bnZ3eBZc.wQr8t4_lC4LvGNWAMsI_z0 is public"],
    },
    Rule {
        kind: "braintree_token",
        patterns: &[r"\baccess_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}\b"],
        check: None,
        needles: &[],
        hits: &[(
            "BT access_token$production$8h6ayb8c7z8h5fke$edc87ff4adfa36d0840164709ab7f3f3",
            "BT [redacted:braintree_token]",
        )],
        misses: &["access_token$production"],
    },
    Rule {
        kind: "facebook_token",
        patterns: &[r"\bEAA[A-Za-z0-9]{80,}"],
        check: None,
        needles: &[],
        hits: &[(
            "fb EAA2GNqTmSH4BbyOA0HNkIn3OIOnHn2INL2io6VOZw5luMu57mnXm4gi4piUfqygB18AIYTimzORZbgmKRw609xhTGOWvGR1mZeEgbc",
            "fb [redacted:facebook_token]",
        )],
        misses: &["EAA is the prefix"],
    },
    Rule {
        kind: "firebase_fcm_key",
        patterns: &[r"\bAAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}"],
        check: None,
        needles: &[],
        hits: &[(
            "FCM AAAA9syxoAw:APA91buKmhr7jmPY72T3AVbfzx06UVZyvmbPkZyRHJouZrQV3xZAxjRM8mbTgDIMRBZxjX_BpYconEG4ZgzWbmHGJR1m4jfXuX8v_h2_1KZNUK9IKLdbFfu0XgOYgOjC29GFfm7sFog1",
            "FCM [redacted:firebase_fcm_key]",
        )],
        misses: &["AAAA9syxoAw:APA91b"],
    },
    Rule {
        kind: "telegram_bot_token",
        patterns: &[r"[0-9]{8,10}:AA[A-Za-z0-9_-]{33}"],
        check: None,
        needles: &[":aa"],
        hits: &[("bot1234567890:AAkbvHEzuPyXQEW88ad3DNBYjvsedonuSsd/getMe", "bot[redacted:telegram_bot_token]/getMe")],
        misses: &["12:34:56 at 20240101:AA"],
    },
    // ---- headers: the scheme stays, the credential goes.
    Rule {
        kind: "basic_auth",
        patterns: &[r"(?i)\bbasic[ \t]+(?P<s>[A-Za-z0-9+/]{6,}={0,2})"],
        check: Some(is_credential_pair),
        needles: &["basic"],
        hits: &[
            ("Authorization: Basic ZGVwbG95OlRyMHViNGRvciYz", "Authorization: Basic [redacted:basic_auth]"),
            ("-H 'authorization: basic Y2ktYm90OjlmSzJtUXg3THc='", "-H 'authorization: basic [redacted:basic_auth]'"),
        ],
        misses: &["Basic authentication is disabled", "a basic example"],
    },
    Rule {
        kind: "bearer_token",
        patterns: &[r"(?i)\bbearer[ \t]+(?P<s>[A-Za-z0-9._~+/-]{8,}=*)"],
        check: Some(is_tokenish),
        needles: &["bearer"],
        hits: &[
            ("Authorization: Bearer abcdef0123456789xyz", "Authorization: Bearer [redacted:bearer_token]"),
            ("kubectl get pods --server https://k8s:6443 -H 'Bearer 0a1b2c3d4e5f6a7b8c9d'", "kubectl get pods --server https://k8s:6443 -H 'Bearer [redacted:bearer_token]'"),
        ],
        misses: &["The Bearer authentication scheme", "bearer tokens expire", "Authorization: Bearer ${TOKEN}"],
    },
    Rule {
        kind: "authorization_header",
        patterns: &[
            r#"(?i)\b(?:proxy-)?authorization\\?["']?[ \t]*[:=][ \t]*\\?["']?(?:(?:basic|bearer|token|apikey|api-key|key|sso-key|bot|digest|negotiate|ntlm|hmac|otp|ssws|dsn)[ \t]+)?(?P<s>[A-Za-z0-9._~+/=:-]{12,})"#,
        ],
        check: Some(is_tokenish),
        needles: &["authorization"],
        hits: &[
            ("Authorization: Token 9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b", "Authorization: Token [redacted:authorization_header]"),
            (r#"{"Authorization": "lin_oauth_live_8f2k3j4h5g6f7d8s9a0"}"#, r#"{"Authorization": "[redacted:authorization_header]"}"#),
            ("Authorization: Basic xY9zQ2wE4rT6yU8i", "Authorization: Basic [redacted:authorization_header]"),
        ],
        misses: &["Authorization: required", "authorization: pending approval", "Authorization: Bearer"],
    },
    Rule {
        kind: "cookie",
        patterns: &[
            r#"(?i)\b(?:set-)?cookie\\?["']?[ \t]*:[ \t]*\\?["']?(?P<s>[A-Za-z0-9_.%-]+=[^\s;"']{8,}(?:;[ \t]*[A-Za-z0-9_.%-]+(?:=[^\s;"']*)?)*)"#,
        ],
        check: None,
        needles: &["cookie"],
        hits: &[(
            "-H 'Cookie: sessionid=8f2k3j4h5g6f7d8s9a0q; csrftoken=abc123'",
            "-H 'Cookie: [redacted:cookie]'",
        )],
        misses: &["cookie: chocolate chip", "Cookie: a=1"],
    },
    // ---- URLs: the scheme, user and host stay.
    Rule {
        kind: "database_url",
        patterns: &[concat!(
            r#"(?i)\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|mssql|sqlserver|cockroachdb|clickhouse|couchdb|neo4j(?:\+s)?|bolt|cassandra|memcached|nats|jdbc:[a-z0-9]+)://"#,
            url_password!()
        )],
        check: Some(is_url_password),
        // Each scheme with its `://`, not `://` alone: most text with a URL has an http
        // one, and this pattern is among the slowest to compile (1.1 ms, paid by every
        // search whose answer shows a URL).
        needles: &[
            "postgres://",
            "postgresql://",
            "mysql://",
            "mariadb://",
            "mongodb://",
            "mongodb+srv://",
            "redis://",
            "rediss://",
            "amqp://",
            "amqps://",
            "mssql://",
            "sqlserver://",
            "cockroachdb://",
            "clickhouse://",
            "couchdb://",
            "neo4j://",
            "neo4j+s://",
            "bolt://",
            "cassandra://",
            "memcached://",
            "nats://",
            "jdbc:",
        ],
        hits: &[
            ("db postgres://admin:hunter22@db.local/app", "db postgres://admin:[redacted:database_url]@db.local/app"),
            ("REDIS_URL=redis://:s3cr3tpw@cache:6379/0", "REDIS_URL=redis://:[redacted:database_url]@cache:6379/0"),
            (
                "mongodb+srv://app:Xy9%40pw@cluster0.abcde.mongodb.net/?retryWrites=true",
                "mongodb+srv://app:[redacted:database_url]@cluster0.abcde.mongodb.net/?retryWrites=true",
            ),
            ("amqp://guest:rabbitpw1@mq:5672/", "amqp://guest:[redacted:database_url]@mq:5672/"),
            ("url=JDBC:MySQL://root:Passw0rd1@db:3306/x", "url=JDBC:MySQL://root:[redacted:database_url]@db:3306/x"),
            ("Postgresql://ops:Tr0ub4dor@pg/x", "Postgresql://ops:[redacted:database_url]@pg/x"),
            // Unencoded `/` and `@` in the password: all of it up to the last `@` before
            // the host goes, the host, path and query stay.
            ("postgres://user:pa/ss@host/db", "postgres://user:[redacted:database_url]@host/db"),
            ("mysql://user:p@ss@host/db", "mysql://user:[redacted:database_url]@host/db"),
            ("DATABASE_URL=postgres://app:x/y@z@db.internal:5432/app", "DATABASE_URL=postgres://app:[redacted:database_url]@db.internal:5432/app"),
            ("redis://:s3c/r3t@cache:6379/0", "redis://:[redacted:database_url]@cache:6379/0"),
            ("mongodb://app:pa/ss@db/app?authSource=admin", "mongodb://app:[redacted:database_url]@db/app?authSource=admin"),
            // An email address later in the path is the path's, not the password's.
            ("postgres://app:pa/ss@db/users/jane@example.org", "postgres://app:[redacted:database_url]@db/users/jane@example.org"),
            ("mysql://app:Pw0rd9@db/users/jane@example.org", "mysql://app:[redacted:database_url]@db/users/jane@example.org"),
            ("\"postgres://u:pa/ss@h/db\"", "\"postgres://u:[redacted:database_url]@h/db\""),
        ],
        misses: &[
            "postgres://localhost:5432/app",
            "postgres://app@db/app",
            "mysql://db.internal:3306/shop",
            "postgres://db:5432/users/jane@example.org",
            "mysql://admin@db.internal/shop",
            "postgres://db.internal/app/a@b",
        ],
    },
    Rule {
        kind: "url_credentials",
        patterns: &[concat!(r#"(?i)\b[a-z][a-z0-9+.-]*://"#, url_password!())],
        check: Some(is_url_password),
        needles: &["://"],
        hits: &[
            ("git clone https://deploy:Tr0ub4dor@git.example.com/org/repo.git", "git clone https://deploy:[redacted:url_credentials]@git.example.com/org/repo.git"),
            ("ftp://me:ftp-pass-9@files.example.com/up", "ftp://me:[redacted:url_credentials]@files.example.com/up"),
            ("https://deploy:pa/ss@git.example.com/org/repo.git", "https://deploy:[redacted:url_credentials]@git.example.com/org/repo.git"),
            ("https://deploy:p@ss@git.example.com/org/repo.git", "https://deploy:[redacted:url_credentials]@git.example.com/org/repo.git"),
            ("(see https://me:a/b@c@host.example.com)", "(see https://me:[redacted:url_credentials]@host.example.com)"),
        ],
        misses: &[
            "http://localhost:8080/api",
            "git@github.com:org/repo.git",
            "git@github.com:org/repo",
            "ssh://git@github.com:22/org/repo",
            "ssh://deploy@build.example.com/srv/app",
            "https://example.com:8443/a@b",
            "https://host/a@b",
            "https://example.com/users/jane.doe@example.org/profile",
            "http://localhost:3000/u/jane@example.org?ref=mail",
            "docker://registry.local:5000/team/app@sha256:e3b0c44298fc1c14",
            "mailto:someone@example.com",
        ],
    },
    Rule {
        kind: "url_token",
        patterns: &[r"(?i)\b(?:https?|git|ssh|ftp)://(?P<s>[A-Za-z0-9_.~%+-]{20,})@"],
        check: Some(is_tokenish),
        needles: &["://"],
        hits: &[("git clone https://a1b2c3d4e5f6a7b8c9d0e1f2@git.example.com/r.git", "git clone https://[redacted:url_token]@git.example.com/r.git")],
        misses: &["https://first.last.name.here@example.com/", "ssh://git@github.com/org/repo"],
    },
    Rule {
        kind: "signed_url",
        patterns: &[
            r"(?i)[?&](?:X-Amz-Signature|X-Goog-Signature|X-Amz-Security-Token)=(?P<s>[^&\s#<>]{16,})",
            r"\bSignature=(?P<s>[a-f0-9]{64})\b",
        ],
        check: None,
        needles: &["signature", "security-token"],
        hits: &[(
            "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=[redacted:signed_url]",
        )],
        misses: &["X-Amz-Signature is computed from the canonical request"],
    },
    Rule {
        kind: "url_query_secret",
        patterns: &[
            r"(?i)[?&](?:access_token|refresh_token|id_token|auth_token|private_token|session_token|token|api_key|apikey|api-key|client_secret|secret|password|passwd|pwd)=(?P<s>[^&\s#<>]{4,})",
        ],
        check: Some(is_value),
        needles: &["token", "key", "secret", "pass", "pwd"],
        hits: &[
            ("GET /v1/data?api_key=9f8e7d6c5b4a3210&page=2", "GET /v1/data?api_key=[redacted:url_query_secret]&page=2"),
            ("jdbc:mysql://db/shop?user=app&password=Qw3rty!9", "jdbc:mysql://db/shop?user=app&password=[redacted:url_query_secret]"),
        ],
        misses: &["/search?q=token&page=2&token_type=bearer", "?access_token=$TOKEN"],
    },
    // ---- connection strings.
    Rule {
        kind: "connection_string",
        patterns: &[
            r"(?i)\b(?:Server|Data Source|Host|Address|Addr|User ID|UID|User|Username|Database|Initial Catalog|Driver)[ \t]*=[^;\r\n]*;(?:[^;\r\n]*;)*?[ \t]*(?:Password|PWD)[ \t]*=[ \t]*(?P<s>\{[^}\r\n]*\}|[^;\r\n]+)",
        ],
        check: None,
        needles: &["password", "pwd"],
        hits: &[(
            "Server=tcp:db.example.net,1433;Initial Catalog=shop;User ID=sa;Password=Pa55 word!;Encrypt=True",
            "Server=tcp:db.example.net,1433;Initial Catalog=shop;User ID=sa;Password=[redacted:connection_string];Encrypt=True",
        )],
        misses: &["Server=db;Database=app;Integrated Security=true;"],
    },
    // ---- credentials on command lines.
    Rule {
        kind: "curl_user",
        patterns: &[
            concat!(r#"\bcurl\b"#, same_command!(), r#"(?:-u|--user|--proxy-user|-U)(?:=|[ \t]*)["']?[^\s:"']*:(?P<s>[^\s"']+)"#),
            concat!(r#"\bhttps?\b"#, same_command!(), r#"(?:-a|--auth)(?:=|[ \t]+)["']?[^\s:"']*:(?P<s>[^\s"']+)"#),
        ],
        check: None,
        needles: &["curl", "http"],
        hits: &[
            ("curl -s -u admin:hunter22 https://api.example.com/v1", "curl -s -u admin:[redacted:curl_user] https://api.example.com/v1"),
            ("curl --user 'ci:9fK2mQx7' -X POST $URL", "curl --user 'ci:[redacted:curl_user]' -X POST $URL"),
            ("http -a me:pa55w0rd GET api.example.com", "http -a me:[redacted:curl_user] GET api.example.com"),
        ],
        misses: &["curl -u admin https://api.example.com", "docker run -u 1000:1000 -p 8080:80 nginx", "curl -H 'Accept: json' https://x:8080/a"],
    },
    Rule {
        kind: "docker_login_password",
        patterns: &[concat!(
            r"\b(?:docker|podman|buildah|skopeo|nerdctl|oras|helm|crane|regctl)\b",
            same_command!(),
            r"?\blogin\b",
            same_command!(),
            r"(?:-p|--password)(?:=|[ \t]+)",
            arg!()
        )],
        check: Some(is_flag_value),
        needles: &["login"],
        hits: &[
            ("docker login -u ci -p Dckr-Pa55 registry.example.com", "docker login -u ci -p [redacted:docker_login_password] registry.example.com"),
            ("helm registry login ghcr.io --username me --password hunter22x", "helm registry login ghcr.io --username me --password [redacted:docker_login_password]"),
        ],
        misses: &["echo $PW | docker login --password-stdin ghcr.io", "docker run -p 8080:80 nginx", "docker login -p $REGISTRY_PASSWORD"],
    },
    Rule {
        kind: "sshpass",
        patterns: &[r#"\bsshpass[ \t]+(?:-[a-oq-zA-Z][^\s]*[ \t]+)*-p[ \t]*(?P<s>"[^"\r\n]*"|'[^'\r\n]*'|[^\s"'|;&<>()-][^\s"'|;&<>()]*)"#],
        check: Some(is_flag_value),
        needles: &["sshpass"],
        hits: &[("sshpass -p 'r00t!pw' ssh -p 2222 root@10.0.0.5", "sshpass -p [redacted:sshpass] ssh -p 2222 root@10.0.0.5")],
        misses: &["sshpass -f ~/.pw ssh host", "sshpass -e ssh host", "ssh -p 2222 git@host"],
    },
    Rule {
        kind: "mysql_password",
        patterns: &[concat!(
            r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mysqlcheck|mysqlpump|mysqlslap|mysqlbinlog|mariadb|mariadb-dump|mariadb-admin)\b",
            same_command!(),
            r#"-p(?P<s>"[^"\r\n]*"|'[^'\r\n]*'|[^\s"'|;&<>()-][^\s"'|;&<>()]*)"#
        )],
        check: Some(is_flag_value),
        needles: &["mysql", "mariadb"],
        hits: &[
            ("mysql -uroot -pS3cretPw shop < dump.sql", "mysql -uroot -p[redacted:mysql_password] shop < dump.sql"),
            ("mysqldump -h db -u app -p'my pw' app", "mysqldump -h db -u app -p[redacted:mysql_password] app"),
        ],
        misses: &["mysql -u root -p shop", "mkdir -p build/out", "mysql -h db -P3306 -u app -p"],
    },
    Rule {
        kind: "cli_password",
        patterns: &[
            concat!(r"\bredis-cli\b", same_command!(), r"(?:-a|--pass)[ \t]+", arg!()),
            concat!(r"\bmongo(?:sh|dump|restore|export|import|stat|top)?\b", same_command!(), r"-p[ \t]+", arg!()),
            concat!(r"\bsqlcmd\b", same_command!(), r"-P[ \t]*", arg!()),
            r#"[ \t]-pass(?:in|out)?[ \t]+pass:(?P<s>[^\s"']+)"#,
            concat!(r"[ \t]-(?:storepass|keypass|srcstorepass|deststorepass|srckeypass|destkeypass)[ \t]+", arg!()),
            r#"\bsmbclient\b[^\r\n|;&]*?[ \t]-U[ \t]*[^\s%"']+%(?P<s>[^\s"']+)"#,
            r#"\bsqlplus\b[ \t]+(?:-[A-Za-z]+[ \t]+)*[A-Za-z0-9_$#]+/(?P<s>[^\s@/"']+)@"#,
        ],
        check: Some(is_flag_value),
        needles: &["redis-cli", "mongo", "sqlcmd", "pass", "smbclient", "sqlplus"],
        hits: &[
            ("redis-cli -h cache -a R3dis!pw ping", "redis-cli -h cache -a [redacted:cli_password] ping"),
            ("mongosh --host db -u admin -p M0ngoPw", "mongosh --host db -u admin -p [redacted:cli_password]"),
            ("openssl pkcs12 -export -passout pass:Exp0rtPw -out a.p12", "openssl pkcs12 -export -passout pass:[redacted:cli_password] -out a.p12"),
            ("keytool -list -keystore k.jks -storepass ch4ngeit", "keytool -list -keystore k.jks -storepass [redacted:cli_password]"),
            ("sqlplus -s scott/T1ger_pw@orcl", "sqlplus -s scott/[redacted:cli_password]@orcl"),
        ],
        misses: &["redis-cli -h cache ping", "mongosh --port 27017", "openssl rand -hex 32"],
    },
    Rule {
        kind: "password_flag",
        patterns: &[concat!(
            r#"(?i)(?:^|[\s"'])--?(?:[a-z0-9]+[-_])*(?:password|passwd|passphrase|pass|pwd|secret|token|api[-_]?key|apikey|access[-_]?key|secret[-_]?key|client[-_]?secret|auth[-_]?token|access[-_]?token|private[-_]?key|signing[-_]?key|encryption[-_]?key)(?:=|[ \t]+)"#,
            arg!()
        )],
        check: Some(is_flag_value),
        needles: &["pass", "pwd", "secret", "token", "key"],
        hits: &[
            ("psql --password hunter22 -h db", "psql --password [redacted:password_flag] -h db"),
            ("wget --http-password=Wg3tPw https://x/y", "wget --http-password=[redacted:password_flag] https://x/y"),
            ("gh auth login --token 0123abcd4567efgh", "gh auth login --token [redacted:password_flag]"),
            ("./deploy --api-key=\"k-93jd8s\" --env prod", "./deploy --api-key=[redacted:password_flag] --env prod"),
        ],
        misses: &[
            "docker login --password-stdin",
            "pg_dump --no-password --verbose",
            "llm --max-tokens 512",
            "tool --token-file ./t.txt",
            "tool --password $DB_PASSWORD",
            "ssh-add --private-key ~/.ssh/id_ed25519",
        ],
    },
    // ---- files that hold credentials.
    Rule {
        kind: "netrc_password",
        patterns: &[
            r"(?i)\b(?:machine[ \t\r\n]+[^\s]+|default)[ \t\r\n]+(?:(?:login|account)[ \t\r\n]+[^\s]+[ \t\r\n]+)+password[ \t\r\n]+(?P<s>[^\s]+)",
            r"(?i)\bmachine[ \t\r\n]+[A-Za-z0-9-]+\.[A-Za-z0-9.-]+[ \t\r\n]+password[ \t\r\n]+(?P<s>[^\s]+)",
        ],
        check: None,
        needles: &["machine", "default"],
        hits: &[
            ("machine api.heroku.com\n  login me@example.com\n  password 01234567-89ab", "machine api.heroku.com\n  login me@example.com\n  password [redacted:netrc_password]"),
            ("machine git.example.com password n3trcPw login me", "machine git.example.com password [redacted:netrc_password] login me"),
        ],
        misses: &["machine learning password reset", "enter the login password below"],
    },
    Rule {
        kind: "docker_config_auth",
        patterns: &[r#""auth"[ \t]*:[ \t]*"(?P<s>[A-Za-z0-9+/]{8,}={0,2})""#],
        check: Some(is_credential_pair),
        needles: &[],
        hits: &[(
            r#"{"auths": {"ghcr.io": {"auth": "ZGVwbG95OlRyMHViNGRvciYz"}}}"#,
            r#"{"auths": {"ghcr.io": {"auth": "[redacted:docker_config_auth]"}}}"#,
        )],
        misses: &[r#"{"auth": "required", "mode": "oauth2"}"#],
    },
    Rule {
        kind: "kubeconfig_key",
        patterns: &[r#"(?i)\bclient-key-data\\?["']?[ \t]*:[ \t]*\\?["']?(?P<s>[A-Za-z0-9+/]{16,}={0,2})"#],
        check: None,
        needles: &["client-key-data"],
        hits: &[(
            "    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlF\n    token: x",
            "    client-key-data: [redacted:kubeconfig_key]\n    token: x",
        )],
        misses: &["    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t"],
    },
    // ---- assignments to secret-ish names, in any config or shell syntax; last, so
    // a value another rule already named keeps its kind.
    Rule {
        kind: "secret_assignment",
        patterns: &[
            concat!(r"(?i)\b[A-Za-z0-9_.-]*?", secret_name!(), assign!(), value!()),
            concat!(r"\bENV[ \t]+(?i:[A-Za-z0-9_]*?", secret_name!(), r")[ \t]+", value!()),
            r"(?:^|[:\s])_auth[ \t]*=[ \t]*(?P<s>[^\s]+)",
            r"(?i)<[A-Za-z0-9_.:-]*?(?:password|passwd|secret|token|api[_.-]?key|apikey|private[_.-]?key|client[_.-]?secret)>(?P<s>[^<\r\n]+)</",
        ],
        check: Some(is_value),
        needles: &["pass", "secret", "token", "key", "credential", "_pw", "_auth"],
        hits: &[
            ("export OPENAI_API_KEY=abc123def456", "export OPENAI_API_KEY=[redacted:secret_assignment]"),
            ("password: correcthorse", "password: [redacted:secret_assignment]"),
            ("PRIVATE_KEY=0x4c0883a69102937d6231471b5dbb6204fe512961", "PRIVATE_KEY=[redacted:secret_assignment]"),
            ("SECRET_KEY_BASE=9b1f6e3c2a", "SECRET_KEY_BASE=[redacted:secret_assignment]"),
            ("JWT_SIGNING_KEY: 'k3y-m4t3r14l'", "JWT_SIGNING_KEY: '[redacted:secret_assignment]'"),
            ("ENCRYPTION_KEY = \"aes:0f1e2d3c\"", "ENCRYPTION_KEY = \"[redacted:secret_assignment]\""),
            (r#"{"clientSecret": "s3cr3t value", "id": 4}"#, r#"{"clientSecret": "[redacted:secret_assignment]", "id": 4}"#),
            ("db_password = \"hunter2\"  # toml", "db_password = \"[redacted:secret_assignment]\"  # toml"),
            ("PGPASSWORD=pgpw123 psql -h db", "PGPASSWORD=[redacted:secret_assignment] psql -h db"),
            ("STRIPE_WEBHOOK_SECRET := abc987xyz", "STRIPE_WEBHOOK_SECRET := [redacted:secret_assignment]"),
            ("'password' => 'laravel!pw'", "'password' => '[redacted:secret_assignment]'"),
            ("ENV API_TOKEN t0k3nvalue", "ENV API_TOKEN [redacted:secret_assignment]"),
            ("<password>mvn-pa55</password>", "<password>[redacted:secret_assignment]</password>"),
            ("MAPBOX_KEY=pk9x8c7v6b5n", "MAPBOX_KEY=[redacted:secret_assignment]"),
            ("_auth=ZGVwbG95OlRyMHViNGRvciYz", "_auth=[redacted:secret_assignment]"),
            (r#"{\"api_key\": \"abc123secret\"}"#, r#"{\"api_key\": \"[redacted:secret_assignment]\"}"#),
        ],
        misses: &[
            "password_field: \"email\"",
            "max_tokens: 4096 and the token_count",
            "let api_key = std::env::var(\"API_KEY\")?;",
            "token = os.environ[\"TOKEN\"]",
            "password: str, token: Option<String>",
            "pub secret: String,",
            "api_key = config.api_key",
            "token: ${{ secrets.GITHUB_TOKEN }}",
            "secret:\n  secretName: db-creds",
            "password = getpass()",
            "if password == \"\" {",
            "primary_key: id",
            "tokenizer = AutoTokenizer.from_pretrained(name)",
            "password: \"********\"",
            "password = '%(db_password)s'",
            "API_KEY=<your-key>",
            "token: xxxxxxxx",
            "--password-file /run/secrets/db",
            "const secret = await vault.read(path); token = new Token(raw)",
            "struct S { specialized_secret: u64, session_token: SessionToken, } fn f(secret: ApiSecret) {}",
            "else { return Token::Eof }; let p = Password::from(raw);",
        ],
    },
];
