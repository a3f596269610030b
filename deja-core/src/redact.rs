//! Secret redaction, applied to every turn before anything is written to the index.
//!
//! Each match is replaced by `[redacted:<kind>]` and the text around it is kept, so a
//! session stays searchable by everything but the secret.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

struct Rule {
    kind: &'static str,
    /// A cheap substring test that must hold before the regex runs.
    hint: fn(&str) -> bool,
    re: Regex,
    /// Replacement template; `$pre` keeps a captured prefix.
    replacement: &'static str,
}

fn rule(kind: &'static str, hint: fn(&str) -> bool, pattern: &str, replacement: &'static str) -> Rule {
    Rule { kind, hint, re: Regex::new(pattern).expect("static redaction regex"), replacement }
}

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    vec![
        rule(
            "private_key",
            |t| t.contains("-----BEGIN"),
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(?s:.*?)(-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\z)",
            "[redacted:private_key]",
        ),
        rule("jwt", |t| t.contains("eyJ"), r"\beyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}", "[redacted:jwt]"),
        rule(
            "bearer",
            |t| t.contains("earer") || t.contains("EARER"),
            r"(?i)(?P<pre>\bbearer\s+)[A-Za-z0-9\-._~+/]{12,}=*",
            "${pre}[redacted:bearer]",
        ),
        rule(
            "url_credentials",
            |t| t.contains("://"),
            r"(?P<pre>\b[a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@",
            "${pre}[redacted:url_credentials]@",
        ),
        rule("aws_key", |t| t.contains("A"), r"\b(AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b", "[redacted:aws_key]"),
        rule(
            "provider_token",
            |t| t.contains("sk-") || t.contains("gh") || t.contains("xox") || t.contains("AIza") || t.contains("glpat-"),
            r"\b(sk-(ant-|proj-|live-|test-)?[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{20,})",
            "[redacted:provider_token]",
        ),
        rule(
            "assignment",
            |t| t.contains('=') || t.contains(':'),
            r#"(?i)(?P<pre>\b[a-z0-9_.-]*?(api[_-]?key|apikey|secret[_-]?(access[_-]?)?key|client[_-]?secret|secret|access[_-]?token|auth[_-]?token|refresh[_-]?token|token|password|passwd|pwd)["']?\s*[:=]\s*["']?)[^\s"'`,;&\[\]{}()<>]{6,}"#,
            "${pre}[redacted:assignment]",
        ),
    ]
});

/// `text` with every secret replaced; borrowed when nothing matched.
pub fn redact(text: &str) -> Cow<'_, str> {
    let mut out: Cow<'_, str> = Cow::Borrowed(text);
    for rule in RULES.iter() {
        if !(rule.hint)(&out) {
            continue;
        }
        if let Cow::Owned(s) = rule.re.replace_all(&out, rule.replacement) {
            out = Cow::Owned(s);
        }
    }
    out
}

/// The kinds of secret `redact` knows.
pub fn kinds() -> impl Iterator<Item = &'static str> {
    RULES.iter().map(|r| r.kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_each_kind_and_keeps_the_rest() {
        let cases = [
            ("key -----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY----- done", "key [redacted:private_key] done"),
            ("id AKIAIOSFODNN7EXAMPLE ok", "id [redacted:aws_key] ok"),
            ("Authorization: Bearer abcdef0123456789xyz", "Authorization: Bearer [redacted:bearer]"),
            ("tok eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N", "tok [redacted:jwt]"),
            ("db postgres://admin:hunter22@db.local/app", "db postgres://[redacted:url_credentials]@db.local/app"),
            ("export OPENAI_API_KEY=abc123def456", "export OPENAI_API_KEY=[redacted:assignment]"),
            ("password: correcthorse", "password: [redacted:assignment]"),
            ("use sk-proj-abcdefghijklmnopqrstuvwx now", "use [redacted:provider_token] now"),
            ("gh ghp_abcdefghijklmnopqrstuvwxyz0123456789", "gh [redacted:provider_token]"),
            ("slack xoxb-1234567890-abcdef", "slack [redacted:provider_token]"),
        ];
        for (input, want) in cases {
            assert_eq!(redact(input), want, "{input}");
        }
        assert!(matches!(redact("max_tokens: 4096 and the token_count"), Cow::Borrowed(_)));
        assert!(matches!(redact("fix the flaky jwt refresh test"), Cow::Borrowed(_)));
    }
}
