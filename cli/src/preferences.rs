//! How the command line shows usage preferences (`Content-Signal`,
//! `Content-Usage`) as JSON, for every command that prints them (the text
//! form is `robotsieve_core::preference::describe`).

use robotsieve_core::preference::{Applied, PreferenceField};

/// The applicable preferences of a URL as JSON: one object per field with a
/// matching line, `{"field": "Content-Usage", "lines": [4], "values":
/// {"train-ai": "y"}}` (values as written; a bare key has the value `""`;
/// `lines` is empty when the artifact kept no line numbers).
pub fn to_json(applied: &[(PreferenceField, Applied)]) -> serde_json::Value {
    applied
        .iter()
        .map(|(field, applied)| {
            let values: serde_json::Map<String, serde_json::Value> = applied
                .entries
                .iter()
                .map(|e| (String::from_utf8_lossy(&e.key).into_owned(), String::from_utf8_lossy(&e.value).into()))
                .collect();
            // Line 0: an artifact compiled without --explain keeps no line numbers.
            let lines: Vec<u32> = applied.lines.iter().copied().filter(|&l| l > 0).collect();
            serde_json::json!({"field": field.name(), "lines": lines, "values": values})
        })
        .collect()
}
