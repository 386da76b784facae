//! `Var`: a named pure dimension (an Int(32) variable), and the unique-name
//! machinery shared by anonymous Vars and Funcs (`v0`, `f0`, `f$1`, ...).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use crate::ir::Expr;

/// Generated names `<prefix><n>`: the next `n` per prefix. Only a handful
/// of prefixes exist (`v`, `f`, `r`, `lambda_`, ...), so this stays small;
/// the names themselves are not stored.
static GENERATED: Mutex<Option<HashMap<String, u64>>> = Mutex::new(None);
/// Func names given explicitly, with how many Funcs took each (the next
/// `$n`). It grows with the distinct names a program chooses, never with
/// the number of Funcs it makes.
static EXPLICIT: Mutex<Option<HashMap<String, u64>>> = Mutex::new(None);

fn lock(m: &'static Mutex<Option<HashMap<String, u64>>>) -> MutexGuard<'static, Option<HashMap<String, u64>>> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A fresh name `<prefix><n>` (Halide's `unique_name(char)`), e.g. `v0`.
pub fn unique_name(prefix: char) -> String {
    generated_name(&prefix.to_string())
}

fn generated_name(prefix: &str) -> String {
    let mut g = lock(&GENERATED);
    let n = g
        .get_or_insert_with(HashMap::new)
        .entry(prefix.to_string())
        .or_insert(0);
    let name = format!("{prefix}{n}");
    *n += 1;
    name
}

/// Was `name` handed out by `generated_name` already?
fn was_generated(name: &str) -> bool {
    let g = lock(&GENERATED);
    g.as_ref().is_some_and(|m| {
        m.iter().any(|(prefix, next)| {
            name.strip_prefix(prefix.as_str())
                .and_then(|n| n.parse::<u64>().ok().filter(|v| v.to_string() == n))
                .is_some_and(|n| n < *next)
        })
    })
}

/// A name for a new Func: an explicit name is used as is the first time and
/// gets a `$n` suffix after that (also when a generated name already took
/// it); anonymous Funcs are `f0`, `f1`, ...
pub fn unique_func_name(name: Option<&str>) -> String {
    match name {
        None => generated_func_name("f"),
        Some(name) => {
            let taken = was_generated(name);
            let mut g = lock(&EXPLICIT);
            let map = g.get_or_insert_with(HashMap::new);
            match map.get_mut(name) {
                Some(n) => {
                    let out = format!("{name}${n}");
                    *n += 1;
                    out
                }
                None if taken => {
                    map.insert(name.to_string(), 1);
                    format!("{name}$0")
                }
                None => {
                    map.insert(name.to_string(), 1);
                    name.to_string()
                }
            }
        }
    }
}

/// A generated Func name `<prefix><n>` (anonymous Funcs, lambdas), with a
/// `$n` suffix if a Func was explicitly given that name before.
pub fn generated_func_name(prefix: &str) -> String {
    let name = generated_name(prefix);
    let mut g = lock(&EXPLICIT);
    match g.as_mut().and_then(|m| m.get_mut(&name)) {
        Some(n) => {
            let out = format!("{name}${n}");
            *n += 1;
            out
        }
        None => name,
    }
}

/// The name of the implicit outermost loop (`Var.outermost()`).
pub const OUTERMOST_NAME: &str = crate::schedule::OUTERMOST;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Var {
    name: String,
}

impl Var {
    /// A Var with the given name (two Vars with one name are the same Var).
    pub fn new(name: impl Into<String>) -> Var {
        Var { name: name.into() }
    }
    /// A Var with a fresh unique name (`v0`, `v1`, ...).
    pub fn fresh() -> Var {
        Var {
            name: unique_name('v'),
        }
    }
    /// The implicit var `_n`.
    pub fn implicit(n: usize) -> Var {
        Var {
            name: format!("_{n}"),
        }
    }
    pub fn outermost() -> Var {
        Var {
            name: OUTERMOST_NAME.to_string(),
        }
    }
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Is this an implicit var (`_0`, `_1`, ...)?
    pub fn is_implicit(&self) -> bool {
        is_implicit_name(&self.name)
    }
    /// Is this the placeholder `_`?
    pub fn is_placeholder(&self) -> bool {
        self.name == "_"
    }
    pub fn expr(&self) -> Expr {
        Expr::var_i32(self.name.clone())
    }
}

/// `_0`, `_1`, ... (an underscore followed by digits).
pub fn is_implicit_name(name: &str) -> bool {
    name.len() > 1 && name.starts_with('_') && name[1..].bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let a = unique_func_name(Some("zz_test"));
        let b = unique_func_name(Some("zz_test"));
        let c = unique_func_name(Some("zz_test"));
        assert_eq!(
            (a.as_str(), b.as_str(), c.as_str()),
            ("zz_test", "zz_test$1", "zz_test$2")
        );
        // Generated names are not recorded, but an explicit name that a
        // generated one already took still gets a suffix.
        let anon = unique_func_name(None);
        assert_eq!(unique_func_name(Some(&anon)), format!("{anon}$0"));
        let explicit = unique_func_name(Some("f999999"));
        assert_eq!(explicit, "f999999");
        assert!(Var::new("_3").is_implicit());
        assert!(!Var::new("x").is_implicit());
        assert!(Var::fresh().name().starts_with('v'));
    }
}
