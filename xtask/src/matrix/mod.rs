//! `cargo xtask matrix [--check]`: merges every adapter's `HarnessInfo` (read through
//! the facade's metadata binary, `meta.rs`) with its `adapters/<id>/harness.toml` into `docs/harness-matrix.md`, the README's matrix
//! block, the static site in `docs/site/` and the one-file view `harness-matrix.toml`.
//! Everything is rendered in memory first, checked (consistency, links), then written — or, with `--check`, compared with what is
//! committed. Output is sorted by id and carries no timestamps except the dates the
//! TOML gives, so the same inputs always give the same bytes.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::write_or_check_by;

pub mod links;
pub mod markdown;
pub mod meta;
pub mod notes;
pub mod site;
pub mod text;
pub mod view;

#[cfg(test)]
mod browser_tests;
#[cfg(test)]
pub mod testing;

use meta::HarnessInfo;
use notes::{HarnessFiles, HarnessNotes};

const MATRIX_PAGE: &str = "docs/harness-matrix.md";
const README: &str = "README.md";
const REGENERATE: &str = "cargo xtask matrix";

/// One harness as the renderers see it: the adapter's metadata and its TOML notes.
pub struct Harness<'a> {
    pub info: &'a HarnessInfo,
    pub notes: &'a HarnessNotes,
}

/// The generated files, paths relative to the workspace root with `/` separators.
#[derive(Debug)]
pub struct Generated {
    pub files: Vec<(String, String)>,
}

/// Renders every output for `infos` and the adapters' `harness.toml` files, given the
/// current README text. Fails when the inputs are inconsistent or a generated link
/// would not resolve.
pub fn generate(root: &Path, infos: &[&HarnessInfo], folder_ids: &[String], files: &HarnessFiles, readme: &str) -> Result<Generated> {
    let notes = notes::parse_all(files)?;
    notes::validate(infos, folder_ids, &notes)?;
    let mut sorted: Vec<&HarnessInfo> = infos.to_vec();
    sorted.sort_by(|a, b| a.id.cmp(&b.id));
    let harnesses: Vec<Harness> =
        sorted.iter().map(|info| Harness { info, notes: notes.get(&info.id).expect("validate checked every adapter has notes") }).collect();
    let mut out = vec![
        (notes::NOTES_FILE.to_string(), view::render(files, &notes)?),
        (MATRIX_PAGE.to_string(), markdown::matrix_page(&harnesses)),
        (README.to_string(), markdown::with_readme_block(readme, &markdown::readme_block(&harnesses))?),
    ];
    for (path, content) in site::pages(&harnesses) {
        out.push((format!("{}/{path}", site::SITE_DIR), content));
    }
    let problems = links::check(&out, &|path: &str| {
        out.iter().find(|(p, _)| p == path).map(|(_, c)| c.clone()).or_else(|| read_workspace_file(root, path))
    });
    if !problems.is_empty() {
        bail!("generated docs have broken links:\n  - {}", problems.join("\n  - "));
    }
    Ok(Generated { files: out })
}

/// A file's text when `path` names a regular file in the workspace.
fn read_workspace_file(root: &Path, path: &str) -> Option<String> {
    let full = root.join(path);
    if !full.is_file() {
        return None;
    }
    std::fs::read(&full).ok().map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Files under `docs/site/` that the generator did not produce, relative to the root.
fn stray_site_files(root: &Path, generated: &Generated) -> Result<Vec<String>> {
    let wanted: BTreeSet<&str> = generated.files.iter().map(|(p, _)| p.as_str()).collect();
    let mut stray = Vec::new();
    let mut stack = vec![root.join(site::SITE_DIR)];
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("reading {}", dir.display())),
        };
        for entry in entries {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
            if !wanted.contains(rel.as_str()) {
                stray.push(rel);
            }
        }
    }
    stray.sort();
    Ok(stray)
}

/// Writes (or checks) the generated files under `root`; removes stale site pages.
pub fn write(root: &Path, generated: &Generated, check: bool) -> Result<()> {
    let mut stale = Vec::new();
    for (path, content) in &generated.files {
        if let Err(e) = write_or_check_by(&root.join(path), content, check, REGENERATE) {
            if !check {
                return Err(e);
            }
            stale.push(format!("{e:#}"));
        }
    }
    for path in stray_site_files(root, generated)? {
        let generated_kind = path.ends_with(".html") || path.ends_with(".css");
        if check || !generated_kind {
            stale.push(format!(
                "{path} is not part of the generated site; {}",
                if generated_kind {
                    format!("run `{REGENERATE}` to remove it")
                } else {
                    "docs/site/ holds only generated files".to_string()
                }
            ));
        } else {
            std::fs::remove_file(root.join(&path)).with_context(|| format!("removing {path}"))?;
            println!("removed {path}");
        }
    }
    if !stale.is_empty() {
        bail!("{}", stale.join("\n"));
    }
    Ok(())
}

pub fn run(root: &Path, check: bool) -> Result<()> {
    let described = meta::load(root)?;
    let infos: Vec<&HarnessInfo> = described.iter().collect();
    let folder_ids = crate::adapters::adapter_ids(root)?;
    let files = notes::load(root, &folder_ids)?;
    let readme_path = root.join(README);
    let readme = std::fs::read_to_string(&readme_path).with_context(|| format!("reading {}", readme_path.display()))?;
    let generated = generate(root, &infos, &folder_ids, &files, &readme)?;
    write(root, &generated, check)?;
    let ids: Vec<&str> = infos.iter().map(|i| i.id.as_str()).collect();
    if check {
        println!("harness matrix is current ({} harnesses: {})", ids.len(), ids.join(", "));
    } else {
        println!("harness matrix generated for {} harnesses: {}", ids.len(), ids.join(", "));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use meta::Capability;

    const ALPHA: &str = r#"
checked_versions = ["1.0"]
checked_on = "2026-01-02"
verify = "Run `deja harnesses`."
"#;

    const BETA: &str = "verify = \"Run `deja harnesses`.\"\n";

    /// The `harness.toml` of `alpha` and `beta`.
    fn files() -> HarnessFiles {
        HarnessFiles::from([("alpha".to_string(), ALPHA.to_string()), ("beta".to_string(), BETA.to_string())])
    }

    const README_TEXT: &str = "# deja\n\n<!-- matrix:start -->\n<!-- matrix:end -->\n\n## Layout\n";

    fn workspace() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join(README), README_TEXT).expect("readme");
        std::fs::create_dir_all(dir.path().join("docs")).expect("docs");
        // The matrix page links to CONTRIBUTING.md, which lives beside the README.
        std::fs::write(dir.path().join("CONTRIBUTING.md"), "# Contributing\n").expect("contributing");
        dir
    }

    fn ids() -> Vec<String> {
        vec!["alpha".to_string(), "beta".to_string()]
    }

    #[test]
    fn generates_then_checks_clean_and_is_deterministic() {
        let dir = workspace();
        let infos = [testing::info("beta"), testing::info("alpha")];
        let first = generate(dir.path(), &infos, &ids(), &files(), README_TEXT).expect("generate");
        let again = generate(dir.path(), &infos, &ids(), &files(), README_TEXT).expect("generate");
        assert_eq!(first.files, again.files);
        write(dir.path(), &first, false).expect("write");
        write(dir.path(), &first, true).expect("fresh output passes --check");
        let readme = std::fs::read_to_string(dir.path().join(README)).expect("readme");
        assert!(readme.starts_with("# deja\n\n<!-- matrix:start -->\n| harness |"), "{readme}");
        assert!(readme.ends_with("<!-- matrix:end -->\n\n## Layout\n"), "{readme}");
        let alpha = readme.find("(`alpha`)").expect("alpha row");
        let beta = readme.find("(`beta`)").expect("beta row");
        assert!(alpha < beta, "rows sorted by id");
        assert!(dir.path().join("docs/site/harnesses/beta.html").is_file());
        let view = std::fs::read_to_string(dir.path().join(notes::NOTES_FILE)).expect("view");
        assert!(
            view.starts_with("# @generated")
                && view.contains("\n[alpha]\n")
                && view.ends_with("\n[beta]\nverify = \"Run `deja harnesses`.\"\n"),
            "{view}"
        );
    }

    #[test]
    fn check_fails_naming_the_file_when_a_capability_changes_in_code() {
        let dir = workspace();
        let before = [testing::info("alpha"), testing::info("beta")];
        write(dir.path(), &generate(dir.path(), &before, &ids(), &files(), README_TEXT).expect("generate"), false).expect("write");

        let after = [
            testing::with_capability("alpha", "command", Capability::Planned("a `/deja` command file".to_string())),
            testing::info("beta"),
        ];
        let readme = std::fs::read_to_string(dir.path().join(README)).expect("readme");
        let regenerated = generate(dir.path(), &after, &ids(), &files(), &readme).expect("generate");
        let err = write(dir.path(), &regenerated, true).expect_err("drift must fail --check").to_string();
        for file in ["docs/harness-matrix.md", "README.md", "docs/site/index.html", "docs/site/harnesses/alpha.html"] {
            assert!(err.contains(file), "{file} should be named in:\n{err}");
        }
        assert!(!err.contains("beta.html"), "{err}");
        assert!(!err.contains(notes::NOTES_FILE), "the view holds no metadata from code: {err}");
    }

    #[test]
    fn check_fails_naming_the_view_when_a_harness_toml_changes() {
        let dir = workspace();
        let infos = [testing::info("alpha"), testing::info("beta")];
        write(dir.path(), &generate(dir.path(), &infos, &ids(), &files(), README_TEXT).expect("generate"), false).expect("write");
        let mut edited = files();
        edited.insert("beta".to_string(), "verify = \"Run `deja harnesses` twice.\"\n".to_string());
        let readme = std::fs::read_to_string(dir.path().join(README)).expect("readme");
        let regenerated = generate(dir.path(), &infos, &ids(), &edited, &readme).expect("generate");
        let err = write(dir.path(), &regenerated, true).expect_err("stale view").to_string();
        assert!(err.contains("harness-matrix.toml differs from what it is generated as; run `cargo xtask matrix`"), "{err}");
    }

    #[test]
    fn stale_site_pages_fail_check_and_are_removed_on_write() {
        let dir = workspace();
        let infos = [testing::info("alpha"), testing::info("beta")];
        let generated = generate(dir.path(), &infos, &ids(), &files(), README_TEXT).expect("generate");
        write(dir.path(), &generated, false).expect("write");
        let old = dir.path().join("docs/site/harnesses/gone.html");
        std::fs::write(&old, "<p>old</p>").expect("stale page");
        let err = write(dir.path(), &generated, true).expect_err("stale page").to_string();
        assert!(err.contains("docs/site/harnesses/gone.html is not part of the generated site"), "{err}");
        write(dir.path(), &generated, false).expect("write removes it");
        assert!(!old.exists());
    }

    #[test]
    fn inconsistent_inputs_stop_generation() {
        let dir = workspace();
        let err = generate(dir.path(), &[testing::info("alpha")], &["alpha".to_string()], &files(), README_TEXT).expect_err("beta orphan");
        assert!(err.to_string().contains("adapters/beta/harness.toml exists but no registered adapter"), "{err}");
    }

    /// The committed site, as a browser opening it from disk would follow it: every
    /// link resolves and every harness page is reachable from the index.
    #[test]
    fn committed_docs_have_no_broken_links() {
        let root = crate::find_workspace_root(std::path::Path::new(env!("CARGO_MANIFEST_DIR"))).expect("the deja workspace");
        let mut files = Vec::new();
        let mut stack = vec![root.join(site::SITE_DIR)];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("docs/site exists; run `cargo xtask matrix`") {
                let path = entry.expect("entry").path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    let rel = path.strip_prefix(&root).expect("under root").to_string_lossy().replace('\\', "/");
                    files.push((rel, std::fs::read_to_string(&path).expect("utf-8 page")));
                }
            }
        }
        files.push((MATRIX_PAGE.to_string(), std::fs::read_to_string(root.join(MATRIX_PAGE)).expect("matrix page")));
        let problems = links::check(&files, &|p: &str| read_workspace_file(&root, p));
        assert!(problems.is_empty(), "broken links:\n{}", problems.join("\n"));
        let index = files.iter().find(|(p, _)| p == "docs/site/index.html").expect("index.html");
        for (path, _) in files.iter().filter(|(p, _)| p.starts_with("docs/site/harnesses/")) {
            let href = path.trim_start_matches("docs/site/");
            assert!(index.1.contains(&format!("href=\"{href}\"")), "{path} is not linked from the index");
        }
    }
}
