// SPDX-License-Identifier: GPL-2.0
//! The webhook provider, over a real unix socket.

use anyhow::Result;
use dranet_sec::attrs;
use dranet_sec::state::PortState;
use dranet_sec::webhook::{self, Attributes, DeviceQuery};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

const DOMAIN: &str = "macsec.dranet-sec.io";

fn lookup(q: &DeviceQuery) -> Result<Attributes> {
    let protected = PortState {
        ifname: "ens1f0".into(),
        protection: "offload-mac".into(),
        reason: "none".into(),
        relation: Some("bound".into()),
        ..Default::default()
    };
    let known = q.name == "pci-0000-11-00-0" || q.mac_address == "02:00:00:00:00:01";
    Ok(attrs::macsec_attributes(
        DOMAIN,
        known.then_some(&protected),
    ))
}

/// Sends `raw`, returns (status, body).
fn call(sock: &Path, raw: &[u8]) -> (u16, String) {
    let mut s = UnixStream::connect(sock).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    // The server may answer, and close, before an oversized body is sent.
    let _ = s.write_all(raw);
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let status = out
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = out.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
    (status, body)
}

fn post(sock: &Path, path: &str, body: &str) -> (u16, String) {
    let raw = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    call(sock, raw.as_bytes())
}

#[test]
fn answers_dranet_over_a_unix_socket() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("webhook.sock");
    let (tx, rx) = std::sync::mpsc::channel();
    let path = sock.clone();
    std::thread::spawn(move || {
        let ready = move || tx.send(()).unwrap();
        webhook::serve(&path, &lookup, &ready).unwrap();
    });
    rx.recv_timeout(Duration::from_secs(10)).unwrap();

    let (code, body) = post(
        &sock,
        "/GetDeviceAttributes",
        r#"{"mac_address":"","pci_address":"0000:11:00.0","name":"pci-0000-11-00-0"}"#,
    );
    assert_eq!(code, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        v[format!("{DOMAIN}/macsecEgress")],
        serde_json::json!({"bool": true})
    );
    assert_eq!(
        v[format!("{DOMAIN}/macsecRelation")],
        serde_json::json!({"string": "bound"})
    );

    // A device the kernel does not track: published false, never absent.
    let (code, body) = post(&sock, "/GetDeviceAttributes", r#"{"name":"eth9"}"#);
    assert_eq!(code, 200);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v[format!("{DOMAIN}/macsecEgress")]["bool"], false);
    assert_eq!(v[format!("{DOMAIN}/macsecReason")]["string"], "untracked");

    // Bad requests get a 4xx and a message; the server lives on.
    let (code, body) = post(&sock, "/GetDeviceAttributes", "{not json");
    assert_eq!(code, 400);
    assert!(body.contains("malformed"), "{body}");
    assert_eq!(post(&sock, "/GetDeviceAttributes", "{}").0, 400);
    assert_eq!(post(&sock, "/Other", "{}").0, 404);
    let get = b"GET /GetDeviceAttributes HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    assert_eq!(call(&sock, get).0, 405);
    let big = format!(r#"{{"name":"{}"}}"#, "x".repeat(200 * 1024));
    assert_eq!(post(&sock, "/GetDeviceAttributes", &big).0, 413);
    // Garbage that is not HTTP at all.
    let _ = call(&sock, b"\x00\x01\x02 garbage\r\n\r\n");
    let (code, _) = post(
        &sock,
        "/GetDeviceAttributes",
        r#"{"mac_address":"02:00:00:00:00:01"}"#,
    );
    assert_eq!(code, 200, "still serving after all that");
}

#[test]
fn handle_without_transport() {
    let (c, _) = webhook::handle(
        "POST",
        "/GetDeviceAttributes?x=1",
        br#"{"name":"a","extra":1}"#,
        &lookup,
    );
    assert_eq!(c, 200, "unknown fields are ignored, a query string too");
    let (c, b) = webhook::handle("POST", "/GetDeviceAttributes", br#"{"name": 5}"#, &lookup);
    assert_eq!(c, 400, "{b}");
}
