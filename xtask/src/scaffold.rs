//! `cargo xtask new-adapter <id> "<Display Name>"`: scaffolds `adapters/<id>/` from
//! the templates in `xtask/templates/adapter/` — its code, tests, a fixture and its
//! `harness.toml` — and links it (the same code as `cargo xtask adapters`), so `cargo
//! test -p deja-adapter-<id>` runs at once — and fails until the parser is written.
//! `cargo xtask remove-adapter <id>` undoes all of that. Neither touches the generated
//! docs or `harness-matrix.toml`: `cargo xtask matrix` regenerates them once the
//! adapter builds.

use std::path::Path;

use anyhow::{bail, ensure, Context, Result};

use crate::adapters;
use crate::matrix::notes::{self, valid_id, HARNESS_FILE};

const CARGO_TEMPLATE: &str = include_str!("../templates/adapter/Cargo.toml.tmpl");
const LIB_TEMPLATE: &str = include_str!("../templates/adapter/lib.rs.tmpl");
const ADAPTER_TESTS_TEMPLATE: &str = include_str!("../templates/adapter/adapter.rs.tmpl");
const FIXTURE_TEMPLATE: &str = include_str!("../templates/adapter/basic.jsonl.tmpl");
const FIXTURES_README_TEMPLATE: &str = include_str!("../templates/adapter/fixtures-README.md.tmpl");
const HARNESS_TEMPLATE: &str = include_str!("../templates/adapter/harness.toml.tmpl");

/// The names one id is spelled as in the generated code.
struct Names<'a> {
    id: &'a str,
    name: &'a str,
}

impl Names<'_> {
    /// `foo-bar` → `FooBar`; a leading digit gets a `Harness` prefix to stay an identifier.
    fn type_prefix(&self) -> String {
        let camel: String = self
            .id
            .split('-')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let mut c = p.chars();
                c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
            })
            .collect();
        if camel.starts_with(|c: char| c.is_ascii_digit()) {
            format!("Harness{camel}")
        } else {
            camel
        }
    }

    fn fill(&self, template: &str) -> String {
        template
            .replace("__NAME_LITERAL__", &format!("{:?}", self.name))
            .replace("__NAME_TOML__", &self.name.replace('\\', "\\\\").replace('"', "\\\""))
            .replace("__DESCRIPTION__", &toml_string(&format!("deja adapter for {}", self.name)))
            .replace("__TYPE__", &self.type_prefix())
            .replace("__CRATE__", &self.id.replace('-', "_"))
            .replace("__UPPER__", &self.id.to_ascii_uppercase().replace('-', "_"))
            .replace("__NAME__", self.name)
            .replace("__ID__", self.id)
    }
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn check_name(name: &str) -> Result<()> {
    ensure!(!name.trim().is_empty(), "the display name is empty; give the harness's name as users know it, e.g. \"Foo Code\"");
    ensure!(!name.chars().any(char::is_control), "the display name {name:?} contains control characters");
    ensure!(name.trim() == name, "the display name {name:?} has leading or trailing spaces");
    Ok(())
}

/// Scaffolds `adapters/<id>/` under `root` and registers it.
pub fn new_adapter(root: &Path, id: &str, name: &str) -> Result<()> {
    if !valid_id(id) {
        bail!("`{id}` is not a valid adapter id: use lowercase ASCII letters, digits and '-' (not first or last), e.g. `foo-code`");
    }
    check_name(name)?;
    let dir = root.join("adapters").join(id);
    if dir.exists() {
        bail!("adapters/{id}/ already exists; pick another id or edit that adapter");
    }
    let names = Names { id, name };
    let harness = names.fill(HARNESS_TEMPLATE);
    let parsed = notes::parse(&harness).context("the new harness.toml does not parse (a bug in xtask)")?;
    ensure!(parsed.verify.contains(name), "the new harness.toml does not name the harness (a bug in xtask)");

    let mut ids = adapters::adapter_ids(root)?;
    ids.push(id.to_string());
    ids.sort();

    let fixture = format!("tests/fixtures/home/.{id}/sessions/basic.jsonl");
    let files = [
        ("Cargo.toml", CARGO_TEMPLATE),
        ("src/lib.rs", LIB_TEMPLATE),
        ("tests/adapter.rs", ADAPTER_TESTS_TEMPLATE),
        (fixture.as_str(), FIXTURE_TEMPLATE),
        ("tests/fixtures/README.md", FIXTURES_README_TEMPLATE),
        (HARNESS_FILE, HARNESS_TEMPLATE),
    ];
    for (rel, template) in files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, names.fill(template)).with_context(|| format!("writing {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    adapters::sync(root, &ids, false).context("linking the new adapter")?;
    println!(
        "\nNext (CONTRIBUTING.md has the whole path):\n  \
         1. cargo test -p deja-adapter-{id}    # fails until `parse` yields a session with a user turn\n  \
         2. replace tests/fixtures/home/.{id}/sessions/basic.jsonl with records shaped like {name}'s, write `parse`,\n     \
            accept and read the snapshots (INSTA_UPDATE=always cargo test -p deja-adapter-{id})\n  \
         3. fill in HarnessInfo in adapters/{id}/src/lib.rs and adapters/{id}/{HARNESS_FILE}\n  \
         4. cargo xtask matrix                 # harness-matrix.toml, README block, docs/harness-matrix.md, docs/site/"
    );
    Ok(())
}

/// Deletes `adapters/<id>/` (its `harness.toml` with it) and unlinks it.
pub fn remove_adapter(root: &Path, id: &str) -> Result<()> {
    if !valid_id(id) {
        bail!("`{id}` is not a valid adapter id");
    }
    let dir = root.join("adapters").join(id);
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).with_context(|| format!("adapters/{id}/ is not an adapter crate"))?;
    if !manifest.contains(&format!("name = \"deja-adapter-{id}\"")) {
        bail!("adapters/{id}/Cargo.toml does not name the package deja-adapter-{id}; not removing it");
    }
    let ids: Vec<String> = adapters::adapter_ids(root)?.into_iter().filter(|i| i != id).collect();
    adapters::sync(root, &ids, false).context("unlinking the adapter")?;
    std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
    let lock_path = root.join("Cargo.lock");
    if let Ok(lock) = std::fs::read_to_string(&lock_path) {
        let pruned = without_locked_package(&lock, &format!("deja-adapter-{id}"));
        if pruned != lock {
            std::fs::write(&lock_path, pruned).with_context(|| format!("writing {}", lock_path.display()))?;
            println!("dropped deja-adapter-{id} from Cargo.lock");
        }
    }
    println!("removed {}\n\nNow run `cargo xtask matrix` to drop it from the docs.", dir.display());
    Ok(())
}

/// `Cargo.lock` without the `[[package]]` entry of `name` and without `name` in other
/// packages' dependency lists: what cargo itself writes once the crate is gone, so a
/// scaffold and its removal leave the lock file as it was.
fn without_locked_package(lock: &str, name: &str) -> String {
    let entry_name = format!("name = \"{name}\"");
    let dependency = format!(" \"{name}\",");
    let mut out: Vec<&str> = Vec::new();
    let blocks: Vec<&str> = lock.split("\n[[package]]\n").collect();
    for (i, block) in blocks.iter().enumerate() {
        if i > 0 && block.lines().next() == Some(entry_name.as_str()) {
            continue;
        }
        out.push(block);
    }
    let joined = out.join("\n[[package]]\n");
    let mut lines: Vec<&str> = joined.split('\n').filter(|l| *l != dependency).collect();
    if lines.last() == Some(&"") && !joined.ends_with('\n') {
        lines.pop();
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The generated view, which neither command touches (`cargo xtask matrix` owns it).
    const VIEW: &str = "# @generated\n\n[alpha]\nverify = \"Run it.\"\n";

    /// A workspace with one adapter, `alpha`, and the files the scaffolder edits.
    fn workspace() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("adapters/alpha")).expect("mkdir");
        std::fs::write(root.join("adapters/alpha/Cargo.toml"), "[package]\nname = \"deja-adapter-alpha\"\n").expect("alpha");
        std::fs::write(root.join("adapters/alpha/harness.toml"), "verify = \"Run it.\"\n").expect("alpha notes");
        std::fs::write(root.join(notes::NOTES_FILE), VIEW).expect("view");
        adapters::sync(root, &["alpha".to_string()], false).expect("initial lists");
        dir
    }

    fn read(root: &Path, rel: &str) -> String {
        std::fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    fn snapshot(root: &Path) -> Vec<String> {
        ["deja-adapters/Cargo.toml", "deja-adapters/src/lib.rs", notes::NOTES_FILE].iter().map(|f| read(root, f)).collect()
    }

    #[test]
    fn scaffolds_a_complete_crate_and_registers_it() {
        let dir = workspace();
        let root = dir.path();
        new_adapter(root, "foo-bar", "Foo \"Bar\" Code").expect("scaffold");

        let cargo = read(root, "adapters/foo-bar/Cargo.toml");
        assert!(cargo.contains("name = \"deja-adapter-foo-bar\""), "{cargo}");
        assert!(cargo.contains("description = \"deja adapter for Foo \\\"Bar\\\" Code\""), "{cargo}");
        assert!(cargo.contains("deja-core.workspace = true"));
        toml::from_str::<toml::Table>(&cargo).expect("manifest is valid TOML");

        let lib = read(root, "adapters/foo-bar/src/lib.rs");
        assert!(lib.starts_with("//! Foo \"Bar\" Code (`foo-bar`):"), "{lib}");
        assert!(lib.contains("const ID: &str = \"foo-bar\";"));
        assert!(lib.contains("name: \"Foo \\\"Bar\\\" Code\","), "name is a Rust string literal");
        assert!(lib.contains("pub struct FooBarFormat;"));
        assert!(lib.contains("roots: &[Root::any(\"~/.foo-bar/sessions\")]"), "the store is declared, not discovered by hand");
        assert!(lib.contains("injected: &InjectedText::NONE"), "the harness's injected-text rules start empty");
        assert!(lib.contains("| record / field | Turn | rule |"));
        assert!(!lib.contains("__"), "every placeholder is filled:\n{lib}");

        let tests = read(root, "adapters/foo-bar/tests/adapter.rs");
        assert!(tests.contains("use deja_adapter_foo_bar::FooBarFormat;"));
        assert!(tests.contains("deja_core::conformance!(FooBarFormat);"));
        assert!(tests.contains("t.role == Role::User"), "the scaffold's test fails until a user turn is parsed");
        assert!(!tests.contains("__"));
        for line in read(root, "adapters/foo-bar/tests/fixtures/home/.foo-bar/sessions/basic.jsonl").lines() {
            serde_json_free_check(line);
        }
        assert!(read(root, "adapters/foo-bar/tests/fixtures/README.md").starts_with("# Foo \"Bar\" Code fixtures"));

        assert!(read(root, "deja-adapters/src/lib.rs").ends_with("pub use deja_adapter_alpha;\npub use deja_adapter_foo_bar;\n"));
        assert!(read(root, "deja-adapters/Cargo.toml").ends_with(
            "deja-adapter-alpha = { path = \"../adapters/alpha\" }\ndeja-adapter-foo-bar = { path = \"../adapters/foo-bar\" }\n"
        ));
        let harness = read(root, "adapters/foo-bar/harness.toml");
        assert!(!harness.contains("__"), "every placeholder is filled:\n{harness}");
        let entry = notes::parse(&harness).expect("harness.toml parses");
        assert!(entry.checked_versions.is_empty() && entry.checked_on.is_none());
        assert!(entry.verify.contains("--harness foo-bar") && entry.verify.contains("DEJA_FOO_BAR_ROOT"), "{}", entry.verify);
        assert!(entry.verify.contains("Foo \"Bar\" Code"), "{}", entry.verify);
        assert_eq!(read(root, notes::NOTES_FILE), VIEW, "the generated view is left to `cargo xtask matrix`");
    }

    /// The fixture is JSON lines (checked without a JSON crate: braces balance).
    fn serde_json_free_check(line: &str) {
        assert!(line.starts_with('{') && line.ends_with('}'), "{line}");
        assert_eq!(line.matches('{').count(), line.matches('}').count(), "{line}");
    }

    #[test]
    fn refuses_bad_or_taken_ids_and_bad_names_without_touching_anything() {
        let dir = workspace();
        let root = dir.path();
        let before = snapshot(root);
        for bad in ["Foo", "foo_bar", "-foo", "foo-", "", "foo bar", "../x"] {
            let err = new_adapter(root, bad, "Foo").expect_err(bad).to_string();
            assert!(err.contains("not a valid adapter id"), "{bad}: {err}");
        }
        let err = new_adapter(root, "alpha", "Alpha").expect_err("exists").to_string();
        assert!(err.contains("adapters/alpha/ already exists"), "{err}");
        for name in ["", "  ", "a\nb", " Foo"] {
            assert!(new_adapter(root, "foo", name).is_err(), "{name:?}");
        }
        assert_eq!(snapshot(root), before);
        assert!(!root.join("adapters/foo").exists());
    }

    #[test]
    fn remove_adapter_undoes_new_adapter() {
        let dir = workspace();
        let root = dir.path();
        let before = snapshot(root);
        new_adapter(root, "foo", "Foo").expect("scaffold");
        assert_ne!(snapshot(root), before);
        remove_adapter(root, "foo").expect("remove");
        assert_eq!(snapshot(root), before);
        assert!(!root.join("adapters/foo").exists());
        assert!(root.join("adapters/alpha").exists());
        assert!(remove_adapter(root, "foo").is_err(), "nothing left to remove");
    }

    #[test]
    fn a_removed_crate_leaves_cargo_lock_as_cargo_would() {
        let before = "version = 4\n\n[[package]]\nname = \"deja-cli\"\ndependencies = [\n \"deja-adapter-a\",\n]\n\n[[package]]\nname = \"deja-adapter-a\"\nversion = \"0.1.0\"\n";
        let with_foo = "version = 4\n\n[[package]]\nname = \"deja-cli\"\ndependencies = [\n \"deja-adapter-a\",\n \"deja-adapter-foo\",\n]\n\n[[package]]\nname = \"deja-adapter-a\"\nversion = \"0.1.0\"\n\n[[package]]\nname = \"deja-adapter-foo\"\nversion = \"0.1.0\"\ndependencies = [\n \"deja-core\",\n]\n";
        assert_eq!(without_locked_package(with_foo, "deja-adapter-foo"), before);
        assert_eq!(without_locked_package(before, "deja-adapter-foo"), before);
    }

    #[test]
    fn type_names_are_identifiers() {
        assert_eq!(Names { id: "foo", name: "" }.type_prefix(), "Foo");
        assert_eq!(Names { id: "kimi-work", name: "" }.type_prefix(), "KimiWork");
        assert_eq!(Names { id: "9router", name: "" }.type_prefix(), "Harness9router");
    }
}

/// The real thing, on a temporary copy of this workspace: scaffold an adapter, build it
/// with its test binary (the whole workspace must load for that), find that nothing
/// outside its folder changed but generated files, remove it, and find every file
/// byte-identical to before.
#[cfg(test)]
mod real_scaffold {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    use super::{new_adapter, remove_adapter};

    /// The files outside its folder a new adapter may change: the facade `cargo xtask
    /// adapters` writes, and the lock file cargo writes. (`cargo xtask matrix` then
    /// regenerates the docs and `harness-matrix.toml`, also generated; it is not run here,
    /// since it builds every adapter.)
    const GENERATED_ON_SCAFFOLD: &[&str] = &["deja-adapters/Cargo.toml", "deja-adapters/src/lib.rs", "Cargo.lock"];

    /// Directories a copy of the workspace does not need.
    const SKIPPED: &[&str] = &[".git", "target", "node_modules"];

    fn copy_workspace(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).expect("mkdir");
        for entry in std::fs::read_dir(from).expect("read workspace").flatten() {
            let name = entry.file_name();
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                if !SKIPPED.iter().any(|s| name == *s) && !name.to_string_lossy().starts_with("target") {
                    copy_workspace(&entry.path(), &to.join(&name));
                }
            } else if kind.is_file() {
                std::fs::copy(entry.path(), to.join(&name)).expect("copy");
            }
        }
    }

    fn tree(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut out = BTreeMap::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("read").flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    out.insert(path.strip_prefix(root).expect("inside").to_path_buf(), std::fs::read(&path).expect("read file"));
                }
            }
        }
        out
    }

    /// The target directory the running test was built into (`…/target/debug/deps/xtask-…`).
    /// Building the copy there reuses every registry crate the test run already compiled
    /// (cargo releases its lock before tests run); only the copy's own crates build.
    fn target_dir() -> PathBuf {
        if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
            return PathBuf::from(dir);
        }
        let exe = std::env::current_exe().expect("test executable");
        exe.ancestors().nth(3).map(Path::to_path_buf).unwrap_or_else(|| std::env::temp_dir().join("deja-scaffold-check"))
    }

    #[test]
    fn a_scaffolded_adapter_compiles_and_its_removal_restores_the_tree() {
        let workspace = super::super::find_workspace_root(Path::new(env!("CARGO_MANIFEST_DIR"))).expect("the deja workspace");
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("deja");
        copy_workspace(&workspace, &root);
        let before = tree(&root);

        new_adapter(&root, "scaffold-probe", "Scaffold Probe").expect("scaffold");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let out = Command::new(cargo)
            .args(["build", "--offline", "--quiet", "-p", "deja-adapter-scaffold-probe", "--tests"])
            .current_dir(&root)
            .env("CARGO_TARGET_DIR", target_dir())
            .env_remove("RUSTFLAGS")
            .output()
            .expect("run cargo check");
        assert!(
            out.status.success(),
            "the scaffolded workspace does not build:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let scaffolded = tree(&root);
        let outside: Vec<&PathBuf> = before
            .keys()
            .chain(scaffolded.keys())
            .filter(|k| before.get(*k) != scaffolded.get(*k) && !k.starts_with("adapters/scaffold-probe"))
            .collect();
        let hand_edited: Vec<&&PathBuf> =
            outside.iter().filter(|k| !GENERATED_ON_SCAFFOLD.iter().any(|g| Path::new(g) == k.as_path())).collect();
        assert!(hand_edited.is_empty(), "a new adapter changed files outside its folder that are not generated: {hand_edited:?}");

        remove_adapter(&root, "scaffold-probe").expect("remove");
        let after = tree(&root);
        let changed: Vec<&PathBuf> = before.keys().chain(after.keys()).filter(|k| before.get(*k) != after.get(*k)).collect();
        assert!(changed.is_empty(), "new-adapter then remove-adapter changed {changed:?}");
    }
}
