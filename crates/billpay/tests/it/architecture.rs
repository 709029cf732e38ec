//! ARCHITECTURE.md's crate table stays true: the crates each one "may depend
//! on" are the workspace crates its manifest depends on (as `cargo metadata`
//! reads them), no more and no fewer. A dependency added without a line in
//! the table, or a line left after one is removed, fails here.

use std::collections::{BTreeMap, BTreeSet};

/// `crates/NAME` → the workspace crates it depends on (not dev-dependencies),
/// by their short names (`billpay-store` → `store`).
fn manifests() -> BTreeMap<String, BTreeSet<String>> {
    let output = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .expect("cargo metadata runs");
    assert!(output.status.success(), "{output:?}");
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut crates = BTreeMap::new();
    for package in metadata["packages"].as_array().unwrap() {
        let manifest = package["manifest_path"].as_str().unwrap();
        let Some((_, folder)) = manifest.rsplit_once("/crates/") else {
            continue; // bench/
        };
        let folder = folder.trim_end_matches("/Cargo.toml").to_owned();
        let ours = package["dependencies"].as_array().unwrap().iter();
        let ours = ours
            .filter(|d| d["kind"].is_null())
            .filter_map(|d| d["name"].as_str()?.strip_prefix("billpay-"))
            .map(str::to_owned)
            .collect();
        crates.insert(folder, ours);
    }
    crates
}

/// `crates/NAME` → what the table says it may depend on: the crate names of
/// the column, each note in parentheses left out; `all`: every crate.
fn table() -> BTreeMap<String, Option<BTreeSet<String>>> {
    let text = include_str!("../../../../ARCHITECTURE.md");
    let mut rows = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("| `crates/")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let name = cells[1].trim_matches('`');
        let Some(folder) = name.strip_prefix("crates/") else {
            continue;
        };
        if folder.contains(' ') {
            continue; // a part of a crate (`crates/store` limits)
        }
        let column = without_notes(cells[3]);
        let listed = match column.trim() {
            "all" => None,
            "—" | "" => Some(BTreeSet::new()),
            names => Some(names.split(',').map(|n| n.trim().to_owned()).collect()),
        };
        rows.insert(folder.to_owned(), listed);
    }
    rows
}

/// The text without its parenthesised notes (which may nest).
fn without_notes(text: &str) -> String {
    let mut depth = 0usize;
    let mut kept = String::new();
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            c if depth == 0 => kept.push(c),
            _ => {}
        }
    }
    kept
}

#[test]
fn the_crate_table_lists_each_crates_dependencies() {
    let manifests = manifests();
    let table = table();
    assert!(manifests.len() >= 15, "{manifests:?}");
    for (folder, depends_on) in &manifests {
        let listed = table
            .get(folder)
            .unwrap_or_else(|| panic!("crates/{folder} has no row in ARCHITECTURE.md's table"));
        if let Some(listed) = listed {
            assert_eq!(
                listed, depends_on,
                "crates/{folder}: ARCHITECTURE.md says it may depend on {listed:?}, its Cargo.toml on {depends_on:?}"
            );
        }
    }
    for folder in table.keys() {
        assert!(
            manifests.contains_key(folder),
            "ARCHITECTURE.md lists crates/{folder}, which is not in the workspace"
        );
    }
}
