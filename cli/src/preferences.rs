//! How the command line shows usage preferences (`Content-Signal`,
//! `Content-Usage`): one JSON shape and one line of text, for every command
//! that prints them.

use robotsieve_engine::preference::{format_entries, Applied, PreferenceField};

/// The applicable preferences of a URL as JSON: one object per field with a
/// matching line, `{"field": "Content-Usage", "lines": [4], "values":
/// {"train-ai": "y"}}` (values as written; a bare key has the value `""`).
pub fn to_json(applied: &[(PreferenceField, Applied)]) -> serde_json::Value {
    applied
        .iter()
        .map(|(field, applied)| {
            let values: serde_json::Map<String, serde_json::Value> = applied
                .entries
                .iter()
                .map(|e| (String::from_utf8_lossy(&e.key).into_owned(), String::from_utf8_lossy(&e.value).into()))
                .collect();
            serde_json::json!({"field": field.name(), "lines": applied.lines, "values": values})
        })
        .collect()
}

/// The applicable preferences as one tab-free line: `Content-Signal (line 2):
/// ai-train=no; Content-Usage (lines 3, 4): train-ai=n`; empty when none apply.
pub fn to_text(applied: &[(PreferenceField, Applied)]) -> String {
    applied
        .iter()
        .map(|(field, applied)| {
            let lines = applied.lines.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
            let plural = if applied.lines.len() == 1 { "line" } else { "lines" };
            format!("{} ({plural} {lines}): {}", field.name(), format_entries(&applied.entries))
        })
        .collect::<Vec<_>>()
        .join("; ")
}
