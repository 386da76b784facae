//! Opaque handles: each object a C caller holds is a `Box` whose address is
//! registered with its kind while it lives, so that a wrong, freed or null
//! handle is an error instead of undefined behavior.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use crate::guard::Result;

fn live() -> &'static Mutex<HashMap<usize, &'static str>> {
    static LIVE: OnceLock<Mutex<HashMap<usize, &'static str>>> = OnceLock::new();
    LIVE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// An object a handle can point to.
pub trait Handle: Sized + 'static {
    const KIND: &'static str;
}

/// A new handle owning `v`.
pub fn new<T: Handle>(v: T) -> *mut T {
    let p = Box::into_raw(Box::new(v));
    live().lock().unwrap_or_else(|e| e.into_inner()).insert(p as usize, T::KIND);
    p
}

/// The object behind `p`, if it is a live handle of this kind.
pub fn get<'a, T: Handle>(p: *const T, what: &str) -> Result<&'a T> {
    let kind = live().lock().unwrap_or_else(|e| e.into_inner()).get(&(p as usize)).copied();
    match kind {
        // SAFETY: registered addresses are live boxes of their kind.
        Some(k) if k == T::KIND => Ok(unsafe { &*p }),
        Some(k) => Err(format!("Error: {what} is a {k} handle, not a {}", T::KIND)),
        None if p.is_null() => Err(format!("Error: {what} is a null {} handle", T::KIND)),
        None => Err(format!("Error: {what} is not a live {} handle", T::KIND)),
    }
}

/// The objects of an array of `n` handles.
pub fn get_all<'a, T: Handle>(p: *const *const T, n: usize, what: &str) -> Result<Vec<&'a T>> {
    if n == 0 {
        return Ok(vec![]);
    }
    if p.is_null() {
        return Err(format!("Error: {what} is a null pointer"));
    }
    // SAFETY: the caller passes an array of `n` handles.
    let items = unsafe { std::slice::from_raw_parts(p, n) };
    items
        .iter()
        .enumerate()
        .map(|(i, h)| get(*h, &format!("{what}[{i}]")))
        .collect()
}

/// Free handle `p` (null is ignored; anything else not live is an error).
pub fn free<T: Handle>(p: *mut T, what: &str) -> Result<()> {
    if p.is_null() {
        return Ok(());
    }
    get(p as *const T, what)?;
    live().lock().unwrap_or_else(|e| e.into_inner()).remove(&(p as usize));
    // SAFETY: it was registered by `new` and is unregistered now.
    drop(unsafe { Box::from_raw(p) });
    Ok(())
}
