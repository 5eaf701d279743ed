// SPDX-License-Identifier: GPL-2.0
//! Kubernetes objects from files as `kubectl apply -f` takes them:
//! multi-document YAML, JSON, `kind: List`, and (for `slice --watch`
//! output) one JSON document per line.

use anyhow::{anyhow, Context as _, Result};
use serde::de::DeserializeOwned;
use serde::Deserialize;

/// Every object in `text`, lists flattened.
pub fn objects(text: &str) -> Result<Vec<serde_json::Value>> {
    let mut docs = Vec::new();
    let yaml: Result<Vec<serde_json::Value>> = serde_yaml::Deserializer::from_str(text)
        .map(|d| serde_json::Value::deserialize(d).map_err(|e| anyhow!("{e}")))
        .collect();
    match yaml {
        Ok(v) => docs.extend(v),
        Err(e) => {
            // JSON lines are not one YAML document.
            for (n, line) in text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
            {
                docs.push(
                    serde_json::from_str(line)
                        .with_context(|| format!("line {}: not YAML ({e}) nor JSON", n + 1))?,
                );
            }
        }
    }
    let mut out = Vec::new();
    for d in docs {
        flatten(d, &mut out);
    }
    Ok(out)
}

fn flatten(v: serde_json::Value, out: &mut Vec<serde_json::Value>) {
    match v {
        serde_json::Value::Null => {}
        serde_json::Value::Array(items) => items.into_iter().for_each(|i| flatten(i, out)),
        serde_json::Value::Object(ref m)
            if m.get("kind")
                .and_then(|k| k.as_str())
                .is_some_and(|k| k.ends_with("List")) =>
        {
            if let Some(serde_json::Value::Array(items)) = m.get("items") {
                items.iter().cloned().for_each(|i| flatten(i, out));
            }
        }
        v => out.push(v),
    }
}

/// The objects of `kind` (apiVersion `resource.k8s.io/v1`) among `objs`.
pub fn of_kind<T: DeserializeOwned>(objs: &[serde_json::Value], kind: &str) -> Result<Vec<T>> {
    objs.iter()
        .filter(|o| o.get("kind").and_then(|k| k.as_str()) == Some(kind))
        .map(|o| {
            let api = o.get("apiVersion").and_then(|a| a.as_str()).unwrap_or("");
            if api != "resource.k8s.io/v1" {
                return Err(anyhow!(
                    "{kind}: apiVersion {api:?}, want resource.k8s.io/v1"
                ));
            }
            serde_json::from_value(o.clone()).with_context(|| format!("invalid {kind}"))
        })
        .collect()
}
