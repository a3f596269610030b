//! The redaction table's own cases, and the properties every rule must have: the
//! secret goes, the text around it stays, near-misses stay whole, and the result
//! does not depend on unrelated text around the secret.

use std::borrow::Cow;
use std::collections::HashSet;

use super::rules::RULES;
use super::ENGINE;
use super::*;

/// Text that looks like a secret to a careless rule and is not one: no rule may touch it.
const NEAR_MISSES: &[&str] = &[
    "/home/me/.ssh/id_ed25519.pub and src/secret_manager/token.rs and C:\\Users\\me\\password.txt",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 (HEAD -> main)",
    "session 123e4567-e89b-12d3-a456-426614174000 resumed",
    "const LOGO = \"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==\";",
    "image sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "integrity=\"sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==\"",
    "let password_field = form.field(\"password\"); password_reset_url = \"/reset\"",
    "max_tokens: 4096, token_count += 1, tokens_used = 12",
    "pip install sk-learn; sk-1234 is too short to be a key",
    "fn validate_password(input: &str) -> bool { input.len() > 8 }",
    "docker run -p 8080:80 -u 1000:1000 nginx && mkdir -p build/out",
    "mysql -u root -p shop && ssh -p 2222 git@host",
    "echo $PW | docker login --password-stdin ghcr.io",
    "http://localhost:3000/api and git@github.com:org/repo.git",
    "The Bearer authentication scheme; Basic authentication; the secret sauce",
    "AKIA and ghp_ and sk_live_ and xoxb- are prefixes",
    "md5 d41d8cd98f00b204e9800998ecf8427e and the sha1 da39a3ee5e6b4b0d3255bfef95601890afd80709",
    "see https://docs.github.com/en/authentication/keeping-your-account-and-data-secure",
    "println!(\"{}\", user.password_hash); let token = lexer.next_token();",
    "api_key: Option<String>, secret: SecretString, password: str",
    "用户密码 password_field 令牌 token_count — ничего секретного",
];

#[test]
fn at_least_forty_kinds_each_with_a_hit_and_a_near_miss() {
    assert!(RULES.len() >= 40, "{} kinds", RULES.len());
    let mut seen = HashSet::new();
    for r in RULES {
        assert!(seen.insert(r.kind), "kind {} twice", r.kind);
        assert!(r.kind.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'), "kind {}", r.kind);
        assert!(!r.hits.is_empty(), "{} has no positive case", r.kind);
        assert!(!r.misses.is_empty(), "{} has no near-miss", r.kind);
    }
}

#[test]
fn few_patterns_run_without_a_literal_to_look_for() {
    let engine = &*ENGINE;
    let always: Vec<&str> = engine.patterns.iter().zip(&engine.always).filter(|(_, a)| **a).map(|((i, _), _)| RULES[*i].kind).collect();
    // Each runs its regex over every text: keep them rare (and give new rules needles).
    eprintln!("patterns without a literal: {always:?}");
    assert!(always.len() <= 8, "{} patterns have no literal and no needles: {always:?}", always.len());
}

#[test]
fn needles_are_lower_case_and_in_every_hit() {
    for r in RULES {
        for n in r.needles {
            assert!(!n.is_empty() && n.to_ascii_lowercase() == *n, "{}: needle {n:?}", r.kind);
        }
        if r.needles.is_empty() {
            continue;
        }
        for (input, _) in r.hits {
            let l = input.to_ascii_lowercase();
            assert!(r.needles.iter().any(|n| l.contains(n)), "{}: {input:?} holds none of its needles", r.kind);
        }
    }
}

#[test]
fn every_rule_redacts_its_cases_and_keeps_the_rest() {
    let mut failures = Vec::new();
    for r in RULES {
        let mark = format!("[redacted:{}]", r.kind);
        for (input, want) in r.hits {
            assert!(want.contains(&mark), "{}: the expected text of {input:?} does not name the kind", r.kind);
            let got = redact(input);
            if got != *want {
                failures.push(format!("{}:\n  input {input:?}\n  want  {want:?}\n  got   {got:?}", r.kind));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn near_misses_stay_whole() {
    let mut failures = Vec::new();
    let all = RULES.iter().flat_map(|r| r.misses.iter().map(move |m| (r.kind, *m))).chain(NEAR_MISSES.iter().map(|m| ("global", *m)));
    for (kind, miss) in all {
        let got = redact(miss);
        if !matches!(got, Cow::Borrowed(_)) {
            failures.push(format!("{kind}: {miss:?} became {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The secret's own text: what a hit's input has that its redaction does not.
fn planted(input: &str, want: &str) -> String {
    let pre = input.bytes().zip(want.bytes()).take_while(|(a, b)| a == b).count();
    let post = input.bytes().rev().zip(want.bytes().rev()).take_while(|(a, b)| a == b).count();
    let end = input.len().saturating_sub(post).max(pre);
    input[pre..end].to_string()
}

#[test]
fn redaction_does_not_depend_on_the_text_around_it() {
    // Unrelated text before and after, ASCII or not, with or without the letters an
    // old pre-check looked for (a fine-grained GitHub token was only redacted when the
    // text happened to contain "gh").
    let arounds =
        [("", ""), ("zzz ", " zzz"), ("日本語のテキスト\n", "\nдальше"), ("gh sk- xox AIza glpat- ", " eyJ ="), ("x\n\n", "\n\n")];
    let mut failures = Vec::new();
    for r in RULES {
        for (input, want) in r.hits {
            for (before, after) in arounds {
                let text = format!("{before}{input}{after}");
                let got = redact(&text);
                if got != format!("{before}{want}{after}") {
                    failures.push(format!("{}: {before:?} + {input:?} + {after:?} gave {got:?}", r.kind));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_secret_is_gone_when_all_are_in_one_text() {
    let hits: Vec<(&str, &str)> = RULES.iter().flat_map(|r| r.hits.iter().copied()).collect();
    let joined: String = hits.iter().map(|(i, _)| format!("{i}\n\n")).collect();
    let out = redact(&joined);
    for (input, want) in hits {
        let secret = planted(input, want);
        assert!(secret.len() >= 3, "{input:?}");
        assert!(!out.contains(&secret), "{secret:?} survived in\n{out}");
    }
}

#[test]
fn the_issue_cases_are_covered() {
    // The kinds issue 14 names, each as a developer pastes it.
    let cases = [
        // No "gh" anywhere in the text: the old pre-check skipped the rule then.
        ("github_pat_11ABCDEFK0123456789_abcdefijklmnopqrstuvwxyzABCDEFIJKLMNOPQRSTUVWXYZ01234567890", "github_fine_grained_token"),
        ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe_key"),
        ("rk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe_key"),
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "basic_auth"),
        ("curl -u deploy:s3cretpass https://ci.example.com", "curl_user"),
        ("redis://:foobared@127.0.0.1:6379", "database_url"),
        ("PRIVATE_KEY=abcdef0123456789", "secret_assignment"),
        ("SECRET_KEY_BASE=abcdef0123456789", "secret_assignment"),
        ("WEBHOOK_SIGNING_KEY=abcdef0123456789", "secret_assignment"),
        ("ENCRYPTION_KEY=abcdef0123456789", "secret_assignment"),
        ("npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_token"),
        ("hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "huggingface_token"),
        ("https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", "slack_webhook"),
        ("DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abcdefghijklmnopqrstuvwxyz0123456789ABCD==;", "azure_storage_key"),
        ("mysqladmin --password s3cretpass status", "password_flag"),
        ("mysqladmin --password=s3cretpass status", "password_flag"),
        ("mysql -uroot -ps3cretpass", "mysql_password"),
        ("docker login -u me -p s3cretpass", "docker_login_password"),
        ("sshpass -p s3cretpass ssh host", "sshpass"),
    ];
    for (text, kind) in cases {
        let out = redact(text);
        assert!(out.contains(&format!("[redacted:{kind}]")), "{text:?} gave {out:?}");
    }
}

#[test]
fn redacting_twice_changes_nothing_more() {
    for r in RULES {
        for (input, _) in r.hits {
            let once = redact(input).into_owned();
            assert_eq!(redact(&once), once, "{}: {input:?}", r.kind);
        }
    }
}

#[test]
fn nothing_to_redact_is_borrowed() {
    assert!(matches!(redact("max_tokens: 4096 and the token_count"), Cow::Borrowed(_)));
    assert!(matches!(redact(""), Cow::Borrowed(_)));
}

#[test]
fn docs_list_every_kind() {
    let doc = include_str!("../../../docs/redaction.md");
    for kind in kinds() {
        assert!(doc.contains(&format!("`{kind}`")), "docs/redaction.md does not list `{kind}`");
    }
}

#[test]
fn a_literal_inside_a_word_wakes_no_pattern_that_starts_at_a_boundary() {
    assert!(super::ascii_word_boundary(b"a pat", 2));
    assert!(super::ascii_word_boundary(b"pat", 0));
    assert!(!super::ascii_word_boundary(b"compatible", 3));
    assert!(super::ascii_word_boundary(b"x=-----BEGIN", 1), "a word byte before a non-word one");
    // Still found where the boundary holds, whatever precedes it.
    let token = format!("key:pat{}.{}", "A".repeat(14), "a".repeat(64));
    assert!(super::redact(&token).contains("[redacted:"), "{}", super::redact(&token));
    assert!(matches!(super::redact("the compatible path"), std::borrow::Cow::Borrowed(_)));
}
