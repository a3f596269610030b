//! Tidy: the structural rules of `docs/architecture.md`, checked over the source as text
//! (run by `cargo test -p xtask`, so CI runs them with the rest of the workspace).
//!
//! - **Layers.** `deja-core`'s modules import (`crate::…`, `super::…` out of the module)
//!   only from their own layer or the ones below, in the table of the "Layers" section
//!   of `docs/architecture.md`, which this reads, and never in a circle; every module is
//!   in the table.
//! - **Adapters.** An adapter names only `deja-core` modules the table marks as
//!   adapter-facing (never the index, the archive or recall), no other adapter and not
//!   the facade; the adapter-facing modules never name tantivy, and the crate root
//!   re-exports nothing from above them.
//! - **Module docs.** Every `.rs` file of the workspace opens with a `//!` doc.
//! - **Core names no harness.** No string literal in `deja-core` outside `src/family/` is
//!   a harness id (the names of the folders under `adapters/`), except `deja`, which is
//!   deja's own name as well as its notes' harness id.
//!
//! It reads imports the way a person does, not the way rustc resolves them: comments
//! and the insides of literals are dropped, `use` groups are opened, inline `mod`s are
//! followed for `super::`. A path through a re-export at the crate root counts as the
//! module it re-exports. Each rule has a test below that feeds it a breach.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One row of the layer table.
#[derive(Debug, Clone)]
struct Layer {
    rank: usize,
    /// Adapters may import these modules (the adapter-facing part of deja-core).
    adapters: bool,
}

/// The layer table: each module's row.
#[derive(Debug, Default)]
struct Layers {
    of: BTreeMap<String, Layer>,
}

impl Layers {
    /// The table under the `## Layers` heading of `doc`: rows `| n | what | `a`, `b` | yes/no |`.
    fn parse(doc: &str) -> Result<Layers, String> {
        let mut in_section = false;
        let section: Vec<&str> = doc
            .lines()
            .filter(|l| {
                if let Some(heading) = l.strip_prefix("## ") {
                    in_section = heading.trim() == "Layers";
                }
                in_section
            })
            .collect();
        if section.is_empty() {
            return Err("docs/architecture.md has no `## Layers` section".into());
        }
        let mut layers = Layers::default();
        for line in section.into_iter().filter(|l| l.starts_with('|')) {
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            let Some(rank) = cells.first().and_then(|c| c.parse::<usize>().ok()) else { continue };
            let [_, _, modules, adapters] = cells[..] else {
                return Err(format!("layer row `{line}`: want four cells, | n | what | modules | adapters |"));
            };
            let modules: Vec<String> = modules.split('`').skip(1).step_by(2).map(str::to_string).collect();
            let adapters = match adapters {
                "yes" => true,
                "no" => false,
                other => return Err(format!("layer {rank}: the adapters cell says `{other}`, want yes or no")),
            };
            let layer = Layer { rank, adapters };
            for m in modules {
                if layers.of.insert(m.clone(), layer.clone()).is_some() {
                    return Err(format!("module `{m}` is in two layers"));
                }
            }
        }
        if layers.of.is_empty() {
            return Err("the `## Layers` section of docs/architecture.md has no table rows".into());
        }
        Ok(layers)
    }
}

/// A source file with its comments and literals taken apart.
struct Scanned {
    /// The code, comments and literal contents blanked (lines kept, so offsets give lines).
    code: String,
    /// Each string literal's content and its line.
    strings: Vec<(String, usize)>,
}

/// Splits `src` into code and string literals: comments (nested block comments too)
/// vanish, string and char literals are emptied, raw and byte strings included.
fn scan(src: &str) -> Scanned {
    let chars: Vec<char> = src.chars().collect();
    let mut code = String::with_capacity(src.len());
    let mut strings = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    // Blanks what `chars[from..to]` held, keeping its newlines.
    let blank = |code: &mut String, line: &mut usize, from: usize, to: usize| {
        for &c in &chars[from..to.min(chars.len())] {
            if c == '\n' {
                code.push('\n');
                *line += 1;
            }
        }
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let after_ident = i > 0 && ident(chars[i - 1]);
        if c == '/' && next == Some('/') {
            let end = chars[i..].iter().position(|&c| c == '\n').map_or(chars.len(), |p| i + p);
            i = end;
        } else if c == '/' && next == Some('*') {
            let (mut depth, mut j) = (0usize, i);
            while j < chars.len() {
                if chars[j] == '/' && chars.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if chars[j] == '*' && chars.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut code, &mut line, i, j);
            i = j;
        } else if let Some((start, hashes)) = raw_string(&chars, i).filter(|_| !after_ident) {
            let closing: Vec<char> = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            let end = (start..chars.len()).find(|&j| chars[j..].starts_with(&closing)).unwrap_or(chars.len());
            strings.push((chars[start..end].iter().collect(), line));
            code.push_str("\"\"");
            blank(&mut code, &mut line, start, end);
            i = end + closing.len();
        } else if c == '"' || (c == 'b' && next == Some('"') && !after_ident) {
            let start = if c == 'b' { i + 2 } else { i + 1 };
            let mut j = start;
            while j < chars.len() && chars[j] != '"' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            strings.push((chars[start..j.min(chars.len())].iter().collect(), line));
            code.push_str("\"\"");
            blank(&mut code, &mut line, start, j);
            i = j + 1;
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}'), else a lifetime or label.
            let end = if next == Some('\\') {
                (i + 2..chars.len()).find(|&j| chars[j] == '\'').map(|j| j + 1)
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 3)
            } else {
                None
            };
            match end {
                Some(end) => {
                    code.push_str("' '");
                    i = end;
                }
                None => {
                    code.push(c);
                    i += 1;
                }
            }
        } else {
            if c == '\n' {
                line += 1;
            }
            code.push(c);
            i += 1;
        }
    }
    Scanned { code, strings }
}

/// Where the content of a raw string (`r"…"`, `r#"…"#`, `br"…"`) starting at `chars[i]`
/// begins, and how many `#` close it.
fn raw_string(chars: &[char], i: usize) -> Option<(usize, usize)> {
    let r = match chars.get(i..i + 2)? {
        ['r', _] => i,
        ['b', 'r'] => i + 1,
        _ => return None,
    };
    let hashes = chars[r + 1..].iter().take_while(|&&c| c == '#').count();
    (chars.get(r + 1 + hashes) == Some(&'"')).then_some((r + 2 + hashes, hashes))
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    Path,
    Open,
    Close,
    Comma,
    Other,
}

/// The tokens of scanned code that paths are made of, each with its line.
fn tokens(code: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' || c == '$' {
            let start = i;
            i += 1;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push((Token::Ident(chars[start..i].iter().collect()), line));
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push((Token::Path, line));
            i += 2;
        } else {
            out.push((
                match c {
                    '{' => Token::Open,
                    '}' => Token::Close,
                    ',' => Token::Comma,
                    _ => Token::Other,
                },
                line,
            ));
            i += 1;
        }
    }
    out
}

/// The first segment of each path a `use` group (or a single path) starting at
/// `tokens[at]` names: `{a, b::c, self}` gives `a` and `b` (and `self` as itself).
fn first_segments(tokens: &[(Token, usize)], at: usize) -> Vec<(String, usize)> {
    match tokens.get(at) {
        Some((Token::Ident(name), line)) => vec![(name.clone(), *line)],
        Some((Token::Open, _)) => {
            let (mut depth, mut out, mut expect) = (0usize, Vec::new(), true);
            for (t, line) in &tokens[at..] {
                match t {
                    Token::Open => {
                        depth += 1;
                        expect = depth == 1;
                    }
                    Token::Close => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    Token::Comma if depth == 1 => expect = true,
                    Token::Ident(name) if expect && depth == 1 => {
                        out.push((name.clone(), *line));
                        expect = false;
                    }
                    _ => {}
                }
            }
            out
        }
        _ => Vec::new(),
    }
}

/// What a path names from the root of its crate: each first segment after `root::`
/// (`crate` and `$crate` inside deja-core, `deja_core` outside it), with its line.
fn rooted(tokens: &[(Token, usize)], roots: &[&str]) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (k, (t, _)) in tokens.iter().enumerate() {
        if let Token::Ident(name) = t {
            let before_is_path = k > 0 && tokens[k - 1].0 == Token::Path;
            if roots.contains(&name.as_str()) && !before_is_path && tokens.get(k + 1).map(|t| &t.0) == Some(&Token::Path) {
                out.extend(first_segments(tokens, k + 2));
            }
        }
    }
    out
}

/// The paths of a file of module `module` (its path in the crate: `["recall", "frame"]`)
/// that leave its top-level module through `super::`, as the first segment named at the
/// crate root. Inline `mod x { … }` blocks are followed, so a test module's
/// `super::super::y` is resolved from where it stands.
fn supers_to_root(tokens: &[(Token, usize)], module: &[String]) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut inline: Vec<usize> = Vec::new(); // brace depth each inline `mod` opened at
    let mut depth = 0usize;
    let mut k = 0;
    while k < tokens.len() {
        match &tokens[k].0 {
            Token::Open => depth += 1,
            Token::Close => {
                depth = depth.saturating_sub(1);
                if inline.last() == Some(&depth) {
                    inline.pop();
                }
            }
            Token::Ident(m) if m == "mod" => {
                if let (Some((Token::Ident(_), _)), Some((Token::Open, _))) = (tokens.get(k + 1), tokens.get(k + 2)) {
                    inline.push(depth);
                    depth += 1;
                    k += 3;
                    continue;
                }
            }
            Token::Ident(s) if s == "super" && (k == 0 || tokens[k - 1].0 != Token::Path) => {
                let mut ups = 0;
                let mut j = k;
                while matches!(&tokens.get(j).map(|t| &t.0), Some(Token::Ident(s)) if s == "super")
                    && tokens.get(j + 1).map(|t| &t.0) == Some(&Token::Path)
                {
                    ups += 1;
                    j += 2;
                }
                if ups >= module.len() + inline.len() && ups > 0 {
                    out.extend(first_segments(tokens, j));
                }
                k = j.max(k + 1);
                continue;
            }
            _ => {}
        }
        k += 1;
    }
    out
}

/// The crate root's `pub use module::{…}` re-exports: item name → module.
fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let code = scan(lib).code;
    let mut out = BTreeMap::new();
    for stmt in code.split(';') {
        let stmt = stmt.trim();
        let Some(path) = stmt.strip_prefix("pub use ") else { continue };
        let Some((module, rest)) = path.split_once("::") else { continue };
        let rest = rest.trim_start_matches('{').trim_end_matches('}');
        for item in rest.split(',') {
            let name = item.rsplit(" as ").next().unwrap_or(item).trim();
            if !name.is_empty() {
                out.insert(name.to_string(), module.trim().to_string());
            }
        }
    }
    out
}

/// A source file: its path from the workspace root and its text.
struct Source {
    path: String,
    text: String,
}

/// The top-level module a file of `deja-core/src/` belongs to, and its module path;
/// `None` for the crate root.
fn module_of(rel: &str) -> Option<(String, Vec<String>)> {
    let rel = rel.strip_suffix(".rs")?;
    let mut parts: Vec<String> = rel.split('/').map(str::to_string).collect();
    if parts == ["lib"] {
        return None;
    }
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    Some((parts[0].clone(), parts))
}

/// An import from one top-level module of deja-core to another.
#[derive(Debug)]
struct Edge {
    from: String,
    to: String,
    at: String,
}

/// Every import between deja-core's top-level modules in `files` (paths relative to
/// `deja-core/src/`), with the root's re-exports resolved to their modules.
fn core_edges(files: &[Source], modules: &BTreeSet<String>, reexports: &BTreeMap<String, String>) -> Vec<Edge> {
    let mut edges = Vec::new();
    for f in files {
        let Some((top, path)) = module_of(&f.path) else { continue };
        let toks = tokens(&scan(&f.text).code);
        let named = rooted(&toks, &["crate", "$crate"]).into_iter().chain(supers_to_root(&toks, &path));
        for (name, line) in named {
            let to = if modules.contains(&name) {
                name
            } else if let Some(m) = reexports.get(&name) {
                m.clone()
            } else {
                continue;
            };
            if to != top {
                edges.push(Edge { from: top.clone(), to, at: format!("deja-core/src/{}:{line}", f.path) });
            }
        }
    }
    edges
}

/// The layer rule: every module is in the table, imports point down or sideways, and
/// no circle closes.
fn check_layers(layers: &Layers, modules: &BTreeSet<String>, edges: &[Edge]) -> Vec<String> {
    let mut problems = Vec::new();
    for m in modules {
        if !layers.of.contains_key(m) {
            problems.push(format!("deja-core module `{m}` is in no layer: add it to the table under `## Layers` in docs/architecture.md"));
        }
    }
    for m in layers.of.keys() {
        if !modules.contains(m) {
            problems.push(format!("the layer table names `{m}`, which is not a module of deja-core"));
        }
    }
    for e in edges {
        if let (Some(from), Some(to)) = (layers.of.get(&e.from), layers.of.get(&e.to)) {
            if to.rank > from.rank {
                problems.push(format!("{}: `{}` (layer {}) imports `{}` (layer {}), above it", e.at, e.from, from.rank, e.to, to.rank));
            }
        }
    }
    let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for e in edges {
        graph.entry(&e.from).or_default().insert(&e.to);
    }
    if let Some(cycle) = find_cycle(&graph) {
        let at: Vec<&str> =
            cycle.windows(2).filter_map(|w| edges.iter().find(|e| e.from == w[0] && e.to == w[1]).map(|e| e.at.as_str())).collect();
        problems.push(format!("deja-core's modules import in a circle: {} ({})", cycle.join(" → "), at.join(", ")));
    }
    problems
}

/// One circle of `graph`, as its nodes with the first repeated at the end.
fn find_cycle<'a>(graph: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Option<Vec<&'a str>> {
    fn visit<'a>(
        n: &'a str,
        graph: &BTreeMap<&'a str, BTreeSet<&'a str>>,
        done: &mut BTreeSet<&'a str>,
        stack: &mut Vec<&'a str>,
    ) -> Option<Vec<&'a str>> {
        if let Some(i) = stack.iter().position(|s| *s == n) {
            let mut cycle = stack[i..].to_vec();
            cycle.push(n);
            return Some(cycle);
        }
        if !done.insert(n) {
            return None;
        }
        stack.push(n);
        for next in graph.get(n).into_iter().flatten() {
            if let Some(c) = visit(next, graph, done, stack) {
                return Some(c);
            }
        }
        stack.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|n| visit(n, graph, &mut done, &mut Vec::new()))
}

/// The adapter-facing modules name no tantivy, and the crate root re-exports only them.
fn check_adapter_facing(layers: &Layers, files: &[Source], reexports: &BTreeMap<String, String>) -> Vec<String> {
    let mut problems = Vec::new();
    for f in files {
        let Some((top, _)) = module_of(&f.path) else { continue };
        if !layers.of.get(&top).is_some_and(|l| l.adapters) {
            continue;
        }
        for (t, line) in tokens(&scan(&f.text).code) {
            if t == Token::Ident("tantivy".into()) {
                problems.push(format!("deja-core/src/{}:{line}: `{top}` is adapter-facing and names tantivy", f.path));
            }
        }
    }
    for (item, module) in reexports {
        if layers.of.get(module).is_some_and(|l| !l.adapters) {
            problems.push(format!("deja-core/src/lib.rs re-exports `{item}` from `{module}`, which adapters may not import"));
        }
    }
    problems
}

/// One adapter's sources and manifest: it names only adapter-facing deja-core modules,
/// and no adapter crate but its own.
fn check_adapter(id: &str, files: &[Source], manifest: &str, layers: &Layers, reexports: &BTreeMap<String, String>) -> Vec<String> {
    let own = format!("deja_adapter_{}", id.replace('-', "_"));
    let mut problems = Vec::new();
    for f in files {
        let toks = tokens(&scan(&f.text).code);
        for (name, line) in rooted(&toks, &["deja_core"]) {
            let module = reexports.get(&name).cloned().unwrap_or(name.clone());
            if layers.of.get(&module).is_some_and(|l| !l.adapters) {
                problems
                    .push(format!("{}:{line}: the adapter imports deja_core::{name}; adapters use only the adapter-facing layers", f.path));
            }
        }
        for (t, line) in &toks {
            if let Token::Ident(name) = t {
                if (name.starts_with("deja_adapter_") && *name != own) || name == "deja_adapters" {
                    problems.push(format!("{}:{line}: the adapter names `{name}`; adapters never import each other", f.path));
                }
            }
        }
    }
    let own_name = format!("name = \"deja-adapter-{id}\"");
    for (n, line) in manifest.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.contains("deja-adapter") && line != own_name {
            problems.push(format!("adapters/{id}/Cargo.toml:{}: `{line}`; adapters never depend on each other", n + 1));
        }
    }
    problems
}

/// Files whose first non-blank line is not a `//!` doc.
fn check_module_docs(files: &[Source]) -> Vec<String> {
    files
        .iter()
        .filter(|f| !f.text.lines().find(|l| !l.trim().is_empty()).is_some_and(|l| l.trim_start().starts_with("//!")))
        .map(|f| format!("{}: no `//!` doc at the top saying what the file is for", f.path))
        .collect()
}

/// String literals of deja-core outside `src/family/` that are a harness id.
fn check_harness_ids(ids: &BTreeSet<String>, files: &[Source]) -> Vec<String> {
    let mut problems = Vec::new();
    for f in files.iter().filter(|f| !f.path.starts_with("family/")) {
        for (s, line) in scan(&f.text).strings {
            if ids.contains(&s) {
                problems.push(format!(
                    "deja-core/src/{}:{line}: names the harness `{s}`; core names a harness only in a family's dialect (src/family/)",
                    f.path
                ));
            }
        }
    }
    problems
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask sits in the workspace").to_path_buf()
}

/// Every `.rs` file under `dir`, relative to `base`, skipping build output, fixtures and
/// snapshots (data, not code).
fn rust_files(dir: &Path, base: &Path) -> Vec<Source> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_dir() {
            if !name.starts_with('.') && !["target", "fixtures", "snapshots", "node_modules"].contains(&name.as_str()) {
                out.extend(rust_files(&path, base));
            }
        } else if name.ends_with(".rs") {
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let rel = path.strip_prefix(base).unwrap_or(&path).to_string_lossy().replace('\\', "/");
            out.push(Source { path: rel, text });
        }
    }
    out
}

/// The ids of every adapter: the folders under `adapters/`.
fn adapter_ids(root: &Path) -> BTreeSet<String> {
    let dirs = std::fs::read_dir(root.join("adapters")).expect("adapters/");
    dirs.filter_map(Result::ok)
        .filter(|e| e.path().join("Cargo.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// deja-core as the checks see it: its files (relative to `src/`), top-level modules,
/// the root's re-exports and the layer table.
fn core() -> (Vec<Source>, BTreeSet<String>, BTreeMap<String, String>, Layers) {
    let root = workspace();
    let src = root.join("deja-core/src");
    let files = rust_files(&src, &src);
    let modules = files.iter().filter_map(|f| module_of(&f.path)).map(|(top, _)| top).collect();
    let lib = files.iter().find(|f| f.path == "lib.rs").map(|f| f.text.as_str()).unwrap_or("");
    let reexports = root_reexports(lib);
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).expect("docs/architecture.md");
    let layers = Layers::parse(&doc).unwrap_or_else(|e| panic!("{e}"));
    (files, modules, reexports, layers)
}

fn assert_none(what: &str, problems: Vec<String>) {
    assert!(problems.is_empty(), "{what}:\n  {}", problems.join("\n  "));
}

#[test]
fn deja_core_layers_point_one_way() {
    let (files, modules, reexports, layers) = core();
    let edges = core_edges(&files, &modules, &reexports);
    assert!(edges.len() > 50, "only {} imports between deja-core's modules were seen: is the scanner blind?", edges.len());
    assert_none("deja-core's layers (docs/architecture.md, `## Layers`)", check_layers(&layers, &modules, &edges));
    assert_none("deja-core's adapter-facing layers", check_adapter_facing(&layers, &files, &reexports));
}

#[test]
fn adapters_import_only_the_adapter_facing_core_and_never_each_other() {
    let root = workspace();
    let (_, _, reexports, layers) = core();
    let mut problems = Vec::new();
    for id in adapter_ids(&root) {
        let dir = root.join("adapters").join(&id);
        let files = rust_files(&dir, &root);
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).expect("adapter manifest");
        problems.extend(check_adapter(&id, &files, &manifest, &layers, &reexports));
    }
    assert_none("adapters", problems);
}

#[test]
fn every_rust_file_opens_with_a_module_doc() {
    let root = workspace();
    let files = rust_files(&root, &root);
    assert!(files.len() > 300, "only {} .rs files found under {}", files.len(), root.display());
    assert_none("module docs", check_module_docs(&files));
}

#[test]
fn core_names_no_harness_outside_its_families() {
    let mut ids = adapter_ids(&workspace());
    // deja's own name: the MCP server's key in every config, its directories, its notes.
    ids.remove("deja");
    assert!(ids.len() > 50, "only {} adapter ids found", ids.len());
    let (files, ..) = core();
    assert_none("harness ids in deja-core", check_harness_ids(&ids, &files));
}

/// The checks themselves, each fed a breach it must report.
mod breaches {
    use super::*;

    const TABLE: &str = "# A\n\n## Layers\n\n| layer | what | modules | adapters |\n| --- | --- | --- | --- |\n\
        | 1 | base | `model` | yes |\n| 2 | index | `index` | no |\n| 3 | recall | `recall` | no |\n\n## Next\n| 9 | x | `nope` | no |\n";

    fn src(path: &str, text: &str) -> Source {
        Source { path: path.into(), text: text.into() }
    }

    fn problems(files: &[Source]) -> Vec<String> {
        let layers = Layers::parse(TABLE).unwrap();
        let modules: BTreeSet<String> = ["model", "index", "recall"].map(String::from).into();
        let edges = core_edges(files, &modules, &BTreeMap::new());
        check_layers(&layers, &modules, &edges)
    }

    #[test]
    fn the_table_is_read_from_its_section_only() {
        let layers = Layers::parse(TABLE).unwrap();
        assert_eq!(layers.of.keys().collect::<Vec<_>>(), ["index", "model", "recall"]);
        assert!(layers.of["model"].adapters && !layers.of["index"].adapters);
        assert!(Layers::parse("# none\n").is_err());
        assert!(Layers::parse("## Layers\n| 1 | a | `x` | maybe |\n").is_err());
    }

    #[test]
    fn an_import_up_a_layer_is_refused_and_one_down_is_not() {
        let up = problems(&[src("index/records.rs", "//! r\nuse crate::recall::mine::{mine, FIX};\n")]);
        assert!(
            up.len() == 1 && up[0].contains("index/records.rs:2") && up[0].contains("`index` (layer 2) imports `recall` (layer 3)"),
            "{up:?}"
        );
        assert!(problems(&[src("recall/query.rs", "use crate::{index::IndexView, model::Turn};")]).is_empty());
        // In a group, through `super::` out of the module, or inline: all are imports.
        assert_eq!(problems(&[src("model.rs", "use crate::{index::X};")]).len(), 1);
        assert_eq!(problems(&[src("model/meta.rs", "use super::super::recall::Y;")]).len(), 1);
        assert_eq!(problems(&[src("model.rs", "fn f() { crate::index::open(); }")]).len(), 1);
        // A test module's `super::super` from a nested file stays inside its module.
        assert!(problems(&[src("index/search.rs", "#[cfg(test)]\nmod tests {\n    use super::super::schema::X;\n}\n")]).is_empty());
        assert_eq!(problems(&[src("index/search.rs", "mod tests {\n    use super::super::super::recall::X;\n}\n")]).len(), 1);
    }

    #[test]
    fn comments_and_strings_are_not_imports() {
        let text = "//! see crate::recall\n/* crate::recall::x /* nested */ crate::recall */\nconst A: &str = \"crate::recall::x\";\nconst B: &str = r#\"crate::recall\"#;\nfn f<'a>(c: char) -> bool { c == '\"' }\n";
        assert!(problems(&[src("model.rs", text)]).is_empty(), "{:?}", problems(&[src("model.rs", text)]));
        let s = scan(text);
        assert_eq!(s.strings.iter().map(|(s, _)| s.as_str()).collect::<Vec<_>>(), ["crate::recall::x", "crate::recall"]);
        assert_eq!(s.code.lines().count(), text.lines().count(), "lines are kept");
    }

    #[test]
    fn a_circle_is_refused_even_within_a_layer() {
        let layers = Layers::parse("## Layers\n| 1 | a | `a`, `b` | no |\n").unwrap();
        let modules: BTreeSet<String> = ["a", "b"].map(String::from).into();
        let files = [src("a.rs", "use crate::b::X;"), src("b.rs", "use crate::a::Y;")];
        let found = check_layers(&layers, &modules, &core_edges(&files, &modules, &BTreeMap::new()));
        assert!(found.len() == 1 && found[0].contains("a → b → a"), "{found:?}");
    }

    #[test]
    fn a_module_missing_from_the_table_is_named() {
        let layers = Layers::parse(TABLE).unwrap();
        let modules: BTreeSet<String> = ["model", "index", "recall", "fresh"].map(String::from).into();
        let found = check_layers(&layers, &modules, &[]);
        assert!(found.len() == 1 && found[0].contains("`fresh` is in no layer"), "{found:?}");
    }

    #[test]
    fn adapters_may_not_reach_past_the_adapter_facing_layers() {
        let layers = Layers::parse(TABLE).unwrap();
        let reexports: BTreeMap<String, String> = [("IndexView".to_string(), "index".to_string())].into();
        let ok = "//! a\nuse deja_core::model::Session;\nuse deja_adapter_foo_bar::X;\n";
        assert!(check_adapter("foo-bar", &[src("a.rs", ok)], "name = \"deja-adapter-foo-bar\"\n", &layers, &reexports).is_empty());
        let bad = "use deja_core::{model::Session, index::SessionMeta};\nuse deja_core::IndexView;\nuse deja_adapter_claude::X;\nuse deja_adapters as _;\n";
        let manifest = "name = \"deja-adapter-foo\"\n[dependencies]\ndeja-adapter-claude.workspace = true\n";
        let found = check_adapter("foo", &[src("a.rs", bad)], manifest, &layers, &reexports);
        assert_eq!(found.len(), 5, "{found:?}");
        assert!(found.iter().any(|p| p.contains("Cargo.toml:3")), "{found:?}");
    }

    #[test]
    fn the_adapter_facing_layers_name_no_tantivy_and_the_root_reexports_none_of_the_rest() {
        let layers = Layers::parse(TABLE).unwrap();
        let files =
            [src("model.rs", "//! m\n// tantivy in a comment is fine\nuse tantivy::Index;\n"), src("index/mod.rs", "use tantivy::Index;")];
        let reexports: BTreeMap<String, String> = [("IndexView".to_string(), "index".to_string())].into();
        let found = check_adapter_facing(&layers, &files, &reexports);
        assert!(found.len() == 2 && found[0].contains("model.rs:3") && found[1].contains("IndexView"), "{found:?}");
    }

    #[test]
    fn a_file_without_its_doc_is_named() {
        let files = [src("a.rs", "\n//! fine\nfn a() {}\n"), src("b.rs", "/// an item doc\nfn b() {}\n"), src("c.rs", "")];
        let found = check_module_docs(&files);
        assert!(found.len() == 2 && found[0].starts_with("b.rs") && found[1].starts_with("c.rs"), "{found:?}");
    }

    #[test]
    fn a_harness_id_is_named_outside_the_families_only() {
        let ids: BTreeSet<String> = ["claude".to_string()].into();
        let files = [
            src("family/claude_jsonl.rs", "const ID: &str = \"claude\";"),
            src("index/search.rs", "// \"claude\" in a comment\nfn f() { g(\"claude code\"); }\nconst H: &str = \"claude\";\n"),
        ];
        let found = check_harness_ids(&ids, &files);
        assert!(found.len() == 1 && found[0].starts_with("deja-core/src/index/search.rs:3"), "{found:?}");
    }

    #[test]
    fn root_reexports_are_read_item_by_item() {
        let r = root_reexports("//! x\npub mod model;\npub use model::{Session, Turn as T};\npub use env::StoreEnv;\npub use inventory;\n");
        assert_eq!(r.get("Session").map(String::as_str), Some("model"));
        assert_eq!(r.get("T").map(String::as_str), Some("model"));
        assert_eq!(r.get("StoreEnv").map(String::as_str), Some("env"));
        assert!(!r.contains_key("inventory"));
    }
}
