//! Minimal splices into a harness's JSON, JSONC or JSON5 config.
//!
//! Built on `jsonc-parser`'s CST (dprint's parser): it keeps every comment, blank line,
//! indentation and the trailing newline or its absence, so only deja's member changes;
//! a new member is written in the indentation the file already uses. What this module
//! guarantees: an edit touches the bytes of the member it names (and the comma before
//! it) and nothing else; an edit that would change nothing returns the text unchanged;
//! a file that does not parse is refused with the line and column of the error.
//! It does not promise that removing a member restores the file byte for byte: the
//! engine gets that by re-deriving the file from its pre-install copy
//! ([`super::engine`]); removal here serves files the harness or the user rewrote.

use jsonc_parser::cst::{CstInputValue, CstNode, CstObject, CstRootNode};
use jsonc_parser::ParseOptions;
use serde_json::Value;

use super::ConfigError;

/// The order keys are written in: `serde_json` here keeps maps sorted, and a config
/// entry reads best as the harnesses' own docs write it (`type`, `command`, `args`…);
/// other keys follow in alphabetical order.
const KEY_ORDER: [&str; 12] =
    ["name", "type", "matcher", "command", "args", "env", "hooks", "timeout", "statusMessage", "enabled", "url", "description"];

fn key_rank(key: &str) -> usize {
    KEY_ORDER.iter().position(|k| *k == key).unwrap_or(KEY_ORDER.len())
}

/// Converts a JSON value into the CST's input form (numbers keep their text).
fn input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(a) => CstInputValue::Array(a.iter().map(input).collect()),
        Value::Object(o) => {
            let mut members: Vec<(&String, &Value)> = o.iter().collect();
            members.sort_by_key(|(k, _)| key_rank(k));
            CstInputValue::Object(members.into_iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

fn parse(text: &str) -> Result<CstRootNode, ConfigError> {
    CstRootNode::parse(text, &ParseOptions::default()).map_err(|e| ConfigError::Parse {
        line: e.line_display(),
        column: e.column_display(),
        message: e.kind().to_string(),
    })
}

/// Checks that `text` parses (JSON, JSONC or JSON5-style), reporting where it does not.
pub fn check(text: &str) -> Result<(), ConfigError> {
    parse(text).map(|_| ())
}

/// Checks that `text` is plain JSON, as a harness that reads it with a strict parser
/// needs (an empty file is one deja creates). Run after [`check`], so a file that does
/// not parse at all is reported as such.
pub fn check_strict(text: &str) -> Result<(), ConfigError> {
    if text.trim().is_empty() {
        return Ok(());
    }
    serde_json::from_str::<serde::de::IgnoredAny>(text)
        .map(|_| ())
        .map_err(|e| ConfigError::NotStrict { line: e.line(), column: e.column() })
}

/// The top-level object, created when the file is empty; an error when the top level
/// is something else.
fn root_object(root: &CstRootNode) -> Result<CstObject, ConfigError> {
    match root.value() {
        None => Ok(root.object_value_or_set()),
        Some(v) => v.as_object().ok_or_else(|| ConfigError::Shape("the top level is not an object".into())),
    }
}

/// The object at `path` below `obj`, creating the missing ones; an error when a member
/// on the way is not an object.
fn object_at(mut obj: CstObject, path: &[&str]) -> Result<CstObject, ConfigError> {
    for (i, key) in path.iter().enumerate() {
        obj = match obj.get(key) {
            Some(prop) => prop
                .value()
                .and_then(|v| v.as_object())
                .ok_or_else(|| ConfigError::Shape(format!("`{}` is not an object", path[..=i].join(".")))),
            None => Ok(obj.append(key, CstInputValue::Object(Vec::new()))).and_then(|p| {
                p.object_value().ok_or_else(|| ConfigError::Shape(format!("`{}` could not be created", path[..=i].join("."))))
            }),
        }?;
    }
    Ok(obj)
}

/// The object at `path` if every member on the way exists and is an object.
fn find_object(root: &CstRootNode, path: &[&str]) -> Option<CstObject> {
    let mut obj = root.value()?.as_object()?;
    for key in path {
        obj = obj.get(key)?.value()?.as_object()?;
    }
    Some(obj)
}

fn value_of(node: &CstNode) -> Option<Value> {
    node.to_serde_value()
}

/// Sets the member at `path` (the last element is the member's key) to `value`.
pub fn set_member(text: &str, path: &[&str], value: &Value) -> Result<String, ConfigError> {
    let (key, parents) = path.split_last().ok_or_else(|| ConfigError::Shape("empty path".into()))?;
    let root = parse(text)?;
    let obj = object_at(root_object(&root)?, parents)?;
    match obj.get(key) {
        Some(prop) if prop.value().as_ref().and_then(value_of).as_ref() == Some(value) => return Ok(text.to_string()),
        Some(prop) => prop.set_value(input(value)),
        None => {
            obj.append(key, input(value));
        }
    }
    Ok(root.to_string())
}

/// The value of the member at `path`, if present.
pub fn get_member(text: &str, path: &[&str]) -> Result<Option<Value>, ConfigError> {
    let (key, parents) = path.split_last().ok_or_else(|| ConfigError::Shape("empty path".into()))?;
    let root = parse(text)?;
    Ok(find_object(&root, parents).and_then(|o| o.get(key)).and_then(|p| p.value()).as_ref().and_then(value_of))
}

/// Removes the member at `path` if present. Parents are kept even when emptied: they
/// may be the user's.
pub fn remove_member(text: &str, path: &[&str]) -> Result<String, ConfigError> {
    let (key, parents) = path.split_last().ok_or_else(|| ConfigError::Shape("empty path".into()))?;
    let root = parse(text)?;
    match find_object(&root, parents).and_then(|o| o.get(key)) {
        Some(prop) => {
            prop.remove();
            Ok(root.to_string())
        }
        None => Ok(text.to_string()),
    }
}

/// Makes the array at `path` hold `value` as its one element `is_ours` accepts:
/// replaces the first such element when it differs, drops any further ones (an old
/// install's duplicate), appends when there is none. Creates the array if missing.
pub fn upsert_array_item(text: &str, path: &[&str], is_ours: &dyn Fn(&Value) -> bool, value: &Value) -> Result<String, ConfigError> {
    let (key, parents) = path.split_last().ok_or_else(|| ConfigError::Shape("empty path".into()))?;
    let root = parse(text)?;
    let obj = object_at(root_object(&root)?, parents)?;
    let array = match obj.get(key) {
        Some(prop) => {
            prop.value().and_then(|v| v.as_array()).ok_or_else(|| ConfigError::Shape(format!("`{}` is not an array", path.join("."))))?
        }
        None => obj.array_value_or_set(key),
    };
    let ours: Vec<CstNode> = array.elements().into_iter().filter(|e| value_of(e).is_some_and(|v| is_ours(&v))).collect();
    let mut changed = false;
    let mut ours = ours.into_iter();
    match ours.next() {
        Some(first) if value_of(&first).as_ref() == Some(value) => {}
        Some(first) => {
            let index = first.element_index().unwrap_or(0);
            first.remove();
            array.insert(index, input(value));
            changed = true;
        }
        None => {
            array.append(input(value));
            changed = true;
        }
    }
    for extra in ours {
        extra.remove();
        changed = true;
    }
    Ok(if changed { root.to_string() } else { text.to_string() })
}

/// Removes every element `is_ours` accepts from the array at `path`; the array's member
/// goes too when nothing else is left in it.
pub fn remove_array_items(text: &str, path: &[&str], is_ours: &dyn Fn(&Value) -> bool) -> Result<String, ConfigError> {
    let (key, parents) = path.split_last().ok_or_else(|| ConfigError::Shape("empty path".into()))?;
    let root = parse(text)?;
    let Some(prop) = find_object(&root, parents).and_then(|o| o.get(key)) else { return Ok(text.to_string()) };
    let Some(array) = prop.value().and_then(|v| v.as_array()) else { return Ok(text.to_string()) };
    let ours: Vec<CstNode> = array.elements().into_iter().filter(|e| value_of(e).is_some_and(|v| is_ours(&v))).collect();
    if ours.is_empty() {
        return Ok(text.to_string());
    }
    for e in ours {
        e.remove();
    }
    if array.elements().is_empty() {
        prop.remove();
    }
    Ok(root.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const USER: &str =
        "{\n  // my servers\n  \"mcpServers\": {\n    \"mine\": { \"command\": \"x\" } // keep\n  },\n  \"theme\": \"dark\",\n}";

    #[test]
    fn a_member_is_added_in_the_files_style_and_nothing_else_moves() {
        let out = set_member(USER, &["mcpServers", "deja"], &json!({"command": "/bin/deja", "args": ["mcp"]})).unwrap();
        assert!(out.starts_with("{\n  // my servers\n  \"mcpServers\": {\n    \"mine\": { \"command\": \"x\" }, // keep\n"), "{out}");
        assert!(out.contains("    \"deja\": {\n      \"command\": \"/bin/deja\""), "{out}");
        assert!(out.ends_with("  \"theme\": \"dark\",\n}"), "no newline added at the end: {out:?}");
        assert_eq!(
            set_member(&out, &["mcpServers", "deja"], &json!({"command": "/bin/deja", "args": ["mcp"]})).unwrap(),
            out,
            "idempotent"
        );
        let removed = remove_member(&out, &["mcpServers", "deja"]).unwrap();
        assert_eq!(get_member(&removed, &["mcpServers", "deja"]).unwrap(), None);
        assert!(removed.contains("// keep") && removed.contains("// my servers"));
    }

    #[test]
    fn missing_parents_and_empty_files_are_created() {
        let out = set_member("", &["mcp", "servers", "deja"], &json!({"command": "d"})).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), json!({"mcp": {"servers": {"deja": {"command": "d"}}}}));
        let out = set_member("{}\n", &["a"], &json!(true)).unwrap();
        assert!(out.ends_with("}\n"), "{out:?}");
    }

    #[test]
    fn a_file_that_does_not_parse_is_refused_with_its_position() {
        let err = set_member("{\n  \"a\": 1,\n  \"b\": [\n}", &["x"], &json!(1)).unwrap_err();
        assert!(matches!(err, ConfigError::Parse { line: 4, .. }), "{err:?}");
        assert!(matches!(set_member("[1]", &["x"], &json!(1)), Err(ConfigError::Shape(_))));
        assert!(matches!(set_member("{\"mcpServers\": 3}", &["mcpServers", "deja"], &json!(1)), Err(ConfigError::Shape(_))));
    }

    #[test]
    fn array_items_are_adopted_replaced_and_removed() {
        let ours = |v: &Value| v.to_string().contains("deja hook-prompt");
        let text = "{\"hooks\": {\"UserPromptSubmit\": [{\"hooks\": [{\"command\": \"mine\"}]}]}}";
        let entry = json!({"hooks": [{"type": "command", "command": "/new/deja hook-prompt"}]});
        let once = upsert_array_item(text, &["hooks", "UserPromptSubmit"], &ours, &entry).unwrap();
        assert_eq!(upsert_array_item(&once, &["hooks", "UserPromptSubmit"], &ours, &entry).unwrap(), once);
        let moved = json!({"hooks": [{"type": "command", "command": "/moved/deja hook-prompt"}]});
        let again = upsert_array_item(&once, &["hooks", "UserPromptSubmit"], &ours, &moved).unwrap();
        let v: Value = serde_json::from_str(&again).unwrap();
        assert_eq!(v["hooks"]["UserPromptSubmit"].as_array().unwrap().len(), 2, "replaced, not duplicated: {again}");
        let gone = remove_array_items(&again, &["hooks", "UserPromptSubmit"], &ours).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&gone).unwrap(), serde_json::from_str::<Value>(text).unwrap());
        let only = upsert_array_item("{}", &["hooks", "SessionStart"], &ours, &entry).unwrap();
        let emptied = remove_array_items(&only, &["hooks", "SessionStart"], &ours).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&emptied).unwrap(), json!({"hooks": {}}), "an array left empty goes");
    }

    #[test]
    fn json5_style_files_are_edited_too() {
        let text = "{\n  // openclaw\n  mcp: { servers: { mine: { command: 'x' } } },\n}\n";
        let out = set_member(text, &["mcp", "servers", "deja"], &json!({"command": "d"})).unwrap();
        assert!(out.contains("mine: { command: 'x' }") && out.contains("\"deja\""), "{out}");
    }
}
