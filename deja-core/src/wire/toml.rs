//! Minimal splices into a harness's TOML config (Codex's `config.toml` and its kin).
//!
//! Built on `toml_edit`, whose documents keep comments, key order, whitespace and the
//! trailing newline of everything they do not change. What this module guarantees: a
//! table deja sets is the only one whose text changes (an existing one is replaced in
//! place, a new one is appended at the end, after a blank line), setting it again to
//! the same keys changes nothing, and a file that does not parse is refused with the
//! line and column of the error. One string in an array value (`[tools] always_load`)
//! is added after the last element in the array's own layout and taken out again with
//! the whitespace around it, every other element and byte kept.

use toml_edit::{DocumentMut, Item, Table};

use super::ConfigError;

fn parse(text: &str) -> Result<DocumentMut, ConfigError> {
    text.parse::<DocumentMut>().map_err(|e| {
        let (line, column) = e.span().map_or((0, 0), |span| line_col(text, span.start));
        ConfigError::Parse { line, column, message: e.message().to_string() }
    })
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text.as_bytes()[..offset.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
    (line, column)
}

/// `s` as a TOML basic string, escaped (a Windows path's backslashes included).
pub fn quote(s: &str) -> String {
    toml_edit::Value::from(s).to_string().trim().to_string()
}

/// Checks that `text` parses as TOML, reporting where it does not.
pub fn check(text: &str) -> Result<(), ConfigError> {
    parse(text).map(|_| ())
}

/// deja's own `key = value` lines as a table.
fn fragment(body: &str) -> Result<Table, ConfigError> {
    let doc = body.parse::<DocumentMut>().map_err(|e| ConfigError::Shape(format!("deja's own table does not parse: {e}")))?;
    Ok(doc.as_table().clone())
}

/// The table that holds the last key of `path`, with the tables above it made by
/// `make` where missing; refused when one of them is not a table.
fn parent_creating<'a, 'p>(
    doc: &'a mut DocumentMut,
    path: &'p [&'p str],
    make: impl Fn() -> Table,
) -> Result<(&'a mut Table, &'p str), ConfigError> {
    let (key, parents) = path.split_last().ok_or_else(|| ConfigError::Shape("empty path".into()))?;
    let mut table: &mut Table = doc.as_table_mut();
    for (i, p) in parents.iter().enumerate() {
        let entry = table.entry(p).or_insert_with(|| Item::Table(make()));
        table = entry.as_table_mut().ok_or_else(|| ConfigError::Shape(format!("`{}` is not a table", path[..=i].join("."))))?;
    }
    Ok((table, key))
}

/// A table deja adds goes after everything else in `text`, set off by a blank line.
fn place_last(table: &mut Table, text: &str) {
    table.set_position(Some(isize::MAX));
    if !text.is_empty() {
        table.decor_mut().set_prefix(if text.ends_with('\n') { "\n" } else { "\n\n" });
    }
}

/// Makes the table at `path` (e.g. `["mcp_servers", "deja"]`) hold exactly the keys of
/// `body`, a TOML fragment of `key = value` lines.
pub fn set_table(text: &str, path: &[&str], body: &str) -> Result<String, ConfigError> {
    let wanted = fragment(body)?;
    let mut doc = parse(text)?;
    if let Some(existing) = find_table(&doc, path) {
        let same = existing.len() == wanted.len()
            && wanted.iter().all(|(k, v)| {
                existing.get(k).and_then(Item::as_value).map(|x| x.to_string().trim().to_string())
                    == v.as_value().map(|x| x.to_string().trim().to_string())
            });
        if same {
            return Ok(text.to_string());
        }
    }
    let (table, key) = parent_creating(&mut doc, path, || {
        let mut t = Table::new();
        t.set_implicit(true);
        t
    })?;
    let mut fresh = Table::new();
    for (k, v) in wanted.iter() {
        fresh.insert(k, v.clone());
    }
    let appended = table.get(key).is_none();
    if appended {
        place_last(&mut fresh, text);
    } else if let Some(old) = table.get(key).and_then(Item::as_table) {
        fresh.set_position(old.position());
        *fresh.decor_mut() = old.decor().clone();
    }
    table.insert(key, Item::Table(fresh));
    Ok(doc.to_string())
}

/// Makes the array of tables at `path` (`[[hooks.hooks]]`) hold `body` (a fragment of
/// `key = value` lines) as its one entry `is_ours` accepts: replaced where it stands
/// when it differs, appended when missing; further such entries are dropped.
pub fn upsert_array_table(text: &str, path: &[&str], is_ours: &dyn Fn(&str) -> bool, body: &str) -> Result<String, ConfigError> {
    let wanted = fragment(body)?;
    let mut doc = parse(text)?;
    let (table, key) = parent_creating(&mut doc, path, || {
        let mut t = Table::new();
        t.set_implicit(true);
        t
    })?;
    let array = table
        .entry(key)
        .or_insert_with(|| Item::ArrayOfTables(toml_edit::ArrayOfTables::new()))
        .as_array_of_tables_mut()
        .ok_or_else(|| ConfigError::Shape(format!("`{}` is not an array of tables", path.join("."))))?;
    let render = |t: &Table| {
        t.iter()
            .map(|(k, v)| format!("{k}={}", v.as_value().map(|x| x.to_string()).unwrap_or_default().trim()))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let ours: Vec<usize> = array.iter().enumerate().filter(|(_, t)| is_ours(&t.to_string())).map(|(i, _)| i).collect();
    let mut fresh = Table::new();
    for (k, v) in wanted.iter() {
        fresh.insert(k, v.clone());
    }
    match ours.first() {
        Some(&i) if array.get(i).map(render) == Some(render(&fresh)) => {
            if ours.len() == 1 {
                return Ok(text.to_string());
            }
        }
        Some(&i) => {
            if let Some(t) = array.get_mut(i) {
                let decor = t.decor().clone();
                let position = t.position();
                *t = fresh;
                *t.decor_mut() = decor;
                t.set_position(position);
            }
        }
        None => {
            fresh.set_position(Some(isize::MAX));
            if !text.is_empty() {
                fresh.decor_mut().set_prefix("\n");
            }
            array.push(fresh);
        }
    }
    for &i in ours.iter().skip(1).rev() {
        array.remove(i);
    }
    Ok(doc.to_string())
}

/// The table at `parents` below the root, when every one of them exists (a removal
/// has nothing to do otherwise).
fn existing_table<'a>(doc: &'a mut DocumentMut, parents: &[&str]) -> Option<&'a mut Table> {
    let mut table = doc.as_table_mut();
    for p in parents {
        table = table.get_mut(p).and_then(Item::as_table_mut)?;
    }
    Some(table)
}

/// Removes every entry of the array of tables at `path` that `is_ours` accepts; the
/// array goes too when nothing else is left in it.
pub fn remove_array_tables(text: &str, path: &[&str], is_ours: &dyn Fn(&str) -> bool) -> Result<String, ConfigError> {
    let mut doc = parse(text)?;
    let (key, parents) = path.split_last().ok_or_else(|| ConfigError::Shape("empty path".into()))?;
    let Some(table) = existing_table(&mut doc, parents) else { return Ok(text.to_string()) };
    let Some(array) = table.get_mut(key).and_then(Item::as_array_of_tables_mut) else { return Ok(text.to_string()) };
    let ours: Vec<usize> = array.iter().enumerate().filter(|(_, t)| is_ours(&t.to_string())).map(|(i, _)| i).collect();
    if ours.is_empty() {
        return Ok(text.to_string());
    }
    for &i in ours.iter().rev() {
        array.remove(i);
    }
    if array.is_empty() {
        table.remove(key);
    }
    Ok(doc.to_string())
}

/// Makes the array value at `path` (`["tools", "always_load"]`) hold the string `item`:
/// appended after the last element in the array's own layout (a multi-line array gets
/// the item on a line of its own, indented like the one before), the key created as
/// `key = ["item"]` (and its table as `[table]`) when missing; unchanged when it holds
/// the item already.
pub fn add_array_value(text: &str, path: &[&str], item: &str) -> Result<String, ConfigError> {
    let mut doc = parse(text)?;
    let (table, key) = parent_creating(&mut doc, path, || {
        let mut t = Table::new();
        place_last(&mut t, text);
        t
    })?;
    match table.get_mut(key) {
        None => {
            let mut array = toml_edit::Array::new();
            array.push(item);
            table.insert(key, toml_edit::value(array));
        }
        Some(existing) => {
            let array = existing
                .as_value_mut()
                .and_then(toml_edit::Value::as_array_mut)
                .ok_or_else(|| ConfigError::Shape(format!("`{}` is not an array", path.join("."))))?;
            if array.iter().any(|v| v.as_str() == Some(item)) {
                return Ok(text.to_string());
            }
            let mut value = toml_edit::Value::from(item);
            match array.iter().last() {
                Some(last) => {
                    let prefix = last.decor().prefix().and_then(|p| p.as_str()).unwrap_or(" ").to_string();
                    let prefix = if prefix.is_empty() { " ".to_string() } else { prefix };
                    let suffix = last.decor().suffix().and_then(|p| p.as_str()).unwrap_or("").to_string();
                    // The last element's suffix (the space or newline before `]`) moves to the new one.
                    if let Some(last) = array.iter_mut().last() {
                        last.decor_mut().set_suffix("");
                    }
                    value.decor_mut().set_prefix(prefix);
                    value.decor_mut().set_suffix(suffix);
                }
                None => value.decor_mut().set_prefix(""),
            }
            array.push_formatted(value);
        }
    }
    Ok(doc.to_string())
}

/// Takes the string `item` out of the array value at `path`; a key left holding an
/// empty array goes, and so does a table left empty by that.
pub fn remove_array_value(text: &str, path: &[&str], item: &str) -> Result<String, ConfigError> {
    let mut doc = parse(text)?;
    let (key, parents) = path.split_last().ok_or_else(|| ConfigError::Shape("empty path".into()))?;
    let Some(table) = existing_table(&mut doc, parents) else { return Ok(text.to_string()) };
    let Some(array) = table.get_mut(key).and_then(Item::as_value_mut).and_then(toml_edit::Value::as_array_mut) else {
        return Ok(text.to_string());
    };
    let Some(at) = array.iter().position(|v| v.as_str() == Some(item)) else { return Ok(text.to_string()) };
    let removed = array.remove(at);
    if at == 0 {
        // The next element takes the removed one's place, and its leading whitespace.
        let prefix = removed.decor().prefix().and_then(|p| p.as_str()).unwrap_or("").to_string();
        if let Some(next) = array.get_mut(0) {
            next.decor_mut().set_prefix(prefix);
        }
    } else if at == array.len() {
        // The new last element takes the removed one's trailing whitespace.
        let suffix = removed.decor().suffix().and_then(|p| p.as_str()).unwrap_or("").to_string();
        if let Some(last) = array.get_mut(at - 1) {
            last.decor_mut().set_suffix(suffix);
        }
    }
    if array.is_empty() {
        table.remove(key);
        if table.is_empty() && !parents.is_empty() {
            let (last, up) = parents.split_last().unwrap_or((&parents[0], &[]));
            let mut parent = doc.as_table_mut();
            for p in up {
                match parent.get_mut(p).and_then(Item::as_table_mut) {
                    Some(t) => parent = t,
                    None => return Ok(doc.to_string()),
                }
            }
            parent.remove(last);
        }
    }
    Ok(doc.to_string())
}

/// Whether the array value at `path` holds the string `item`.
pub fn has_array_value(text: &str, path: &[&str], item: &str) -> Result<bool, ConfigError> {
    let doc = parse(text)?;
    let (key, parents) = path.split_last().ok_or_else(|| ConfigError::Shape("empty path".into()))?;
    let Some(table) = find_table(&doc, parents) else { return Ok(false) };
    Ok(table.get(key).and_then(Item::as_array).is_some_and(|a| a.iter().any(|v| v.as_str() == Some(item))))
}

fn find_table<'a>(doc: &'a DocumentMut, path: &[&str]) -> Option<&'a Table> {
    let mut t = doc.as_table();
    for p in path {
        t = t.get(p)?.as_table()?;
    }
    Some(t)
}

/// Whether the table at `path` exists.
pub fn has_table(text: &str, path: &[&str]) -> Result<bool, ConfigError> {
    Ok(find_table(&parse(text)?, path).is_some())
}

/// Removes the table at `path` if present.
pub fn remove_table(text: &str, path: &[&str]) -> Result<String, ConfigError> {
    let mut doc = parse(text)?;
    let (key, parents) = path.split_last().ok_or_else(|| ConfigError::Shape("empty path".into()))?;
    let Some(table) = existing_table(&mut doc, parents) else { return Ok(text.to_string()) };
    if table.remove(key).is_none() {
        return Ok(text.to_string());
    }
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const USER: &str = "# my codex config\nmodel = \"o4\"  # pinned\n\n[mcp_servers.mine]\ncommand = \"x\"\n";
    const DEJA: &str = "type = \"stdio\"\ncommand = \"/bin/deja\"\nargs = [\"mcp\"]\n";

    #[test]
    fn a_table_is_appended_replaced_in_place_and_removed() {
        let out = set_table(USER, &["mcp_servers", "deja"], DEJA).unwrap();
        assert!(out.starts_with(USER), "everything before stays: {out}");
        assert!(out.ends_with("\n[mcp_servers.deja]\ntype = \"stdio\"\ncommand = \"/bin/deja\"\nargs = [\"mcp\"]\n"), "{out}");
        assert_eq!(set_table(&out, &["mcp_servers", "deja"], DEJA).unwrap(), out, "idempotent");
        let moved = set_table(&out, &["mcp_servers", "deja"], &DEJA.replace("/bin/deja", "/opt/deja")).unwrap();
        assert_eq!(moved, out.replace("/bin/deja", "/opt/deja"), "replaced where it stands");
        assert!(has_table(&moved, &["mcp_servers", "deja"]).unwrap());
        let removed = remove_table(&moved, &["mcp_servers", "deja"]).unwrap();
        assert!(removed.starts_with(USER) && !removed.contains("deja"), "{removed}");
    }

    #[test]
    fn array_of_tables_entries_are_adopted_replaced_and_removed() {
        let user = "# hooks\n[[hooks.hooks]]\nevent = \"x\"\ncommand = \"mine\"\n";
        let ours = |t: &str| t.contains("deja hook-tool");
        let body = "event = \"tool_call_before\"\ncommand = \"/bin/deja hook-tool\"\n";
        let once = upsert_array_table(user, &["hooks", "hooks"], &ours, body).unwrap();
        assert!(once.starts_with(user) && once.contains("command = \"/bin/deja hook-tool\""), "{once}");
        assert_eq!(upsert_array_table(&once, &["hooks", "hooks"], &ours, body).unwrap(), once, "idempotent");
        let moved = upsert_array_table(&once, &["hooks", "hooks"], &ours, &body.replace("/bin/", "/opt/")).unwrap();
        assert_eq!(moved.matches("[[hooks.hooks]]").count(), 2, "{moved}");
        assert!(moved.contains("/opt/deja hook-tool") && !moved.contains("/bin/deja"));
        let gone = remove_array_tables(&moved, &["hooks", "hooks"], &ours).unwrap();
        assert!(gone.starts_with(user) && !gone.contains("deja"), "{gone}");
        let only = upsert_array_table("", &["hooks", "hooks"], &ours, body).unwrap();
        assert!(!remove_array_tables(&only, &["hooks", "hooks"], &ours).unwrap().contains("hooks"));
    }

    const TOOLS: &str = "# tools\n[tools]\nalways_load = [\"git_show\", \"notify\"]  # mine\n\n[mcp]\nx = 1\n";

    #[test]
    fn an_array_value_gains_one_item_and_loses_it_byte_for_byte() {
        let path = ["tools", "always_load"];
        let out = add_array_value(TOOLS, &path, "mcp_deja_deja").unwrap();
        assert_eq!(out, TOOLS.replace("\"notify\"]", "\"notify\", \"mcp_deja_deja\"]"), "{out}");
        assert_eq!(add_array_value(&out, &path, "mcp_deja_deja").unwrap(), out, "idempotent");
        assert!(has_array_value(&out, &path, "mcp_deja_deja").unwrap());
        assert_eq!(remove_array_value(&out, &path, "mcp_deja_deja").unwrap(), TOOLS, "byte for byte");
        assert_eq!(remove_array_value(TOOLS, &path, "mcp_deja_deja").unwrap(), TOOLS, "nothing to remove");
    }

    #[test]
    fn a_multi_line_array_gets_the_item_on_its_own_line() {
        let text = "[tools]\nalways_load = [\n    \"git_show\",\n    \"notify\",\n]\n";
        let path = ["tools", "always_load"];
        let out = add_array_value(text, &path, "mcp_deja_deja").unwrap();
        assert_eq!(out, "[tools]\nalways_load = [\n    \"git_show\",\n    \"notify\",\n    \"mcp_deja_deja\",\n]\n", "{out}");
        assert_eq!(remove_array_value(&out, &path, "mcp_deja_deja").unwrap(), text);
    }

    #[test]
    fn a_missing_key_or_table_is_created_and_goes_with_the_last_item() {
        let path = ["tools", "always_load"];
        let user = "model = \"x\"  # pinned\n";
        let out = add_array_value(user, &path, "mcp_deja_deja").unwrap();
        assert_eq!(out, "model = \"x\"  # pinned\n\n[tools]\nalways_load = [\"mcp_deja_deja\"]\n", "{out}");
        assert_eq!(remove_array_value(&out, &path, "mcp_deja_deja").unwrap(), user);
        let empty = add_array_value("", &path, "mcp_deja_deja").unwrap();
        assert_eq!(empty, "[tools]\nalways_load = [\"mcp_deja_deja\"]\n");
        let with_table = "[tools]\nother = true\n";
        let out = add_array_value(with_table, &path, "mcp_deja_deja").unwrap();
        assert_eq!(out, "[tools]\nother = true\nalways_load = [\"mcp_deja_deja\"]\n");
        assert_eq!(remove_array_value(&out, &path, "mcp_deja_deja").unwrap(), with_table);
    }

    #[test]
    fn the_item_goes_from_the_file_as_the_harness_rewrote_it() {
        let path = ["tools", "always_load"];
        // The harness put its own item before deja's and one after.
        let rewritten = "[tools]\nalways_load = [\"mcp_deja_deja\", \"git_show\", \"notify\"]\n";
        assert_eq!(remove_array_value(rewritten, &path, "mcp_deja_deja").unwrap(), "[tools]\nalways_load = [\"git_show\", \"notify\"]\n");
        let middle = "[tools]\nalways_load = [\"git_show\", \"mcp_deja_deja\", \"notify\"]\n";
        assert_eq!(remove_array_value(middle, &path, "mcp_deja_deja").unwrap(), "[tools]\nalways_load = [\"git_show\", \"notify\"]\n");
        assert!(matches!(add_array_value("[tools]\nalways_load = 3\n", &path, "x"), Err(ConfigError::Shape(_))));
    }

    #[test]
    fn an_empty_file_gets_the_table_alone() {
        let out = set_table("", &["mcp_servers", "deja"], DEJA).unwrap();
        assert_eq!(out, format!("[mcp_servers.deja]\n{DEJA}"));
    }

    #[test]
    fn a_file_that_does_not_parse_is_refused_with_its_position() {
        let err = set_table("a = 1\nb = = 2\n", &["x"], DEJA).unwrap_err();
        assert!(matches!(err, ConfigError::Parse { line: 2, .. }), "{err:?}");
    }
}
