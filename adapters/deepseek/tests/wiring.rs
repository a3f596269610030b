//! The DeepSeek Harness layer as its page demands: a freshly generated `[]` layer is
//! replaced by deja's `insert:` block, dropping back from `deepseek-auto` to `deepseek`
//! rewrites the block without the `deja-auto` row and removes `auto.js` (the row goes
//! first, so the profile never names a missing file), and uninstall writes `[]` back.

use std::collections::{BTreeMap, BTreeSet};

use deja_adapter_deepseek::DeepSeek;
use deja_core::wire::engine::Engine;
use deja_core::wire::{Edit, WireContext};
use deja_core::{HarnessFormat, StoreEnv};

fn targets(env: &StoreEnv) -> BTreeMap<String, Vec<Edit>> {
    let wiring = DeepSeek.wiring().expect("deepseek has wiring");
    let cx = WireContext { env, exe: "/opt/deja/deja".into() };
    let plain = wiring.plain(&cx);
    let auto: Vec<Edit> = plain.iter().cloned().chain(wiring.auto(&cx)).collect();
    [("deepseek".to_string(), plain), ("deepseek-auto".to_string(), auto)].into_iter().collect()
}

fn on(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[test]
fn the_layer_block_replaces_the_empty_list_and_gives_it_back() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    let dsh = tmp.path().join("dsh");
    std::fs::create_dir_all(&dsh).expect("mkdir");
    let layer = dsh.join("cordis.patch.yml");
    std::fs::write(&layer, "[]\n").expect("seed");
    let env = StoreEnv::with_home(&home).set("DSH_HOME", dsh.display().to_string());
    let edits = targets(&env);
    let engine = Engine::new(tmp.path().join("state"));
    let apply = |t: &[&str]| {
        let plan = engine.plan(&on(t), &edits, false).expect("plan");
        assert!(plan.refused.is_empty(), "{:?}", plan.refused);
        engine.apply(&plan).expect("apply");
        std::fs::read_to_string(&layer).expect("layer")
    };

    let auto = apply(&["deepseek-auto"]);
    assert!(auto.starts_with("# deja mcp:start") && !auto.contains("[]"), "{auto}");
    assert!(auto.contains("- insert:\n    - id: mcp-deja\n") && auto.contains("command: \"/opt/deja/deja\""), "{auto}");
    assert!(auto.contains("- id: deja-auto"), "{auto}");
    let plugins = dsh.join("plugins/deja");
    assert!(plugins.join("auto.js").is_file() && plugins.join("command.js").is_file());
    // dsh 0.1.0-rc.8 assembles the dynamic context after claiming the prompt and before
    // `agent/pre-step`: the block is looked up at the claim, and the tool hooks carry the
    // session so one error's fix is added once.
    let auto_js = std::fs::read_to_string(plugins.join("auto.js")).expect("auto.js");
    assert!(auto_js.contains(r#"ctx.on("agent/inbox/claimed""#) && !auto_js.contains("agent/pre-step\""), "{auto_js}");
    assert_eq!(auto_js.matches("session_id: sessionOf(").count(), 3, "{auto_js}");
    let package = std::fs::read_to_string(plugins.join("package.json")).expect("package.json");
    assert!(package.contains("\"type\": \"module\""), "{package}");

    let plain = apply(&["deepseek"]);
    assert!(plain.contains("- id: deja-command") && !plain.contains("deja-auto"), "{plain}");
    assert!(!plugins.join("auto.js").exists() && plugins.join("command.js").is_file());

    assert_eq!(apply(&[]), "[]\n", "an empty layer fails the profile load");
    assert!(!plugins.exists(), "the plugin directory install created goes");
}
