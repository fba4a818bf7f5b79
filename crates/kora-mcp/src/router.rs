//! Routing what a server sends to whoever waits for it: each request waits on its own channel,
//! found by id; a reply nobody waits for any more (its request timed out) is dropped; the
//! server's own requests are answered; a connection that ends wakes every waiter at once.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Mutex;

use serde_json::Value as Json;

use crate::jsonrpc::{answer_server_request, classify, Incoming};

/// What a waiting request hears.
#[derive(Debug)]
pub enum Heard {
    Reply(Result<Json, (i64, String)>),
    /// The connection ended (or broke the protocol) before the reply came: why.
    Closed(String),
}

#[derive(Default)]
pub struct Router {
    waiting: Mutex<HashMap<u64, Sender<Heard>>>,
    closed: Mutex<Option<String>>,
    /// `notifications/tools/list_changed` came: the next use lists the tools again.
    pub tools_changed: AtomicBool,
    /// Replies that came for no waiting request (late ones): counted, never delivered.
    pub dropped: AtomicU64,
    next_id: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Router {
    /// A fresh id and the channel its reply arrives on; `Err` when the connection is closed.
    pub fn wait_for(&self) -> Result<(u64, Receiver<Heard>), String> {
        let (tx, rx) = channel();
        let mut w = lock(&self.waiting);
        if let Some(why) = lock(&self.closed).clone() {
            return Err(why);
        }
        let id = self.next_id.fetch_add(1, Ordering::SeqCst) + 1;
        w.insert(id, tx);
        Ok((id, rx))
    }

    /// Stops waiting for `id`: a reply that still comes is dropped.
    pub fn forget(&self, id: u64) {
        lock(&self.waiting).remove(&id);
    }

    /// Delivers one message; `answer` sends the client's reply to a server request.
    pub fn route(&self, msg: &Json, answer: &dyn Fn(Json)) -> Result<(), String> {
        match classify(msg) {
            Incoming::Response { id, result } => match lock(&self.waiting).remove(&id) {
                Some(tx) => {
                    let _ = tx.send(Heard::Reply(result));
                }
                None => {
                    self.dropped.fetch_add(1, Ordering::SeqCst);
                }
            },
            Incoming::Notification { method } => {
                if method == "notifications/tools/list_changed" {
                    self.tools_changed.store(true, Ordering::SeqCst);
                }
            }
            Incoming::Request { id, method } => answer(answer_server_request(&id, &method)),
            Incoming::Invalid(why) => return Err(format!("protocol error: {why}")),
        }
        Ok(())
    }

    /// Request `id` alone failed (an HTTP error for its POST): its waiter hears why.
    pub fn fail(&self, id: u64, why: &str) {
        if let Some(tx) = lock(&self.waiting).remove(&id) {
            let _ = tx.send(Heard::Closed(why.to_string()));
        }
    }

    /// Whether a request still waits for its reply.
    pub fn is_waiting(&self, id: u64) -> bool {
        lock(&self.waiting).contains_key(&id)
    }

    /// The connection is over: every waiter hears why, and no new request starts on it.
    pub fn close(&self, why: &str) {
        let mut w = lock(&self.waiting);
        let mut c = lock(&self.closed);
        if c.is_none() {
            *c = Some(why.to_string());
        }
        for (_, tx) in w.drain() {
            let _ = tx.send(Heard::Closed(why.to_string()));
        }
    }

    pub fn is_closed(&self) -> Option<String> {
        lock(&self.closed).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_late_reply_is_dropped_and_the_next_request_gets_its_own() {
        let r = Router::default();
        let (first, rx1) = r.wait_for().expect("open");
        r.forget(first);
        drop(rx1);
        let (second, rx2) = r.wait_for().expect("open");
        r.route(
            &json!({"jsonrpc": "2.0", "id": first, "result": "late"}),
            &|_| {},
        )
        .expect("valid");
        r.route(
            &json!({"jsonrpc": "2.0", "id": second, "result": "mine"}),
            &|_| {},
        )
        .expect("valid");
        match rx2.try_recv() {
            Ok(Heard::Reply(Ok(v))) => assert_eq!(v, json!("mine")),
            other => panic!("{other:?}"),
        }
        assert_eq!(r.dropped.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn closing_wakes_every_waiter_and_refuses_new_ones() {
        let r = Router::default();
        let (_, rx) = r.wait_for().expect("open");
        r.close("the server exited");
        assert!(matches!(rx.try_recv(), Ok(Heard::Closed(w)) if w.contains("exited")));
        assert!(r.wait_for().is_err());
    }
}
