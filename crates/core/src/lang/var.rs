//! `Var`: a named pure dimension (an Int(32) variable), and the unique-name
//! machinery shared by anonymous Vars and Funcs (`v0`, `f0`, `f$1`, ...).

use std::collections::HashMap;
use std::sync::Mutex;

use crate::ir::Expr;

static CHAR_COUNTERS: Mutex<Option<HashMap<char, u64>>> = Mutex::new(None);
static NAME_COUNTS: Mutex<Option<HashMap<String, u64>>> = Mutex::new(None);

/// A fresh name `<prefix><n>` (Halide's `unique_name(char)`), e.g. `v0`.
pub fn unique_name(prefix: char) -> String {
    let mut g = CHAR_COUNTERS.lock().unwrap_or_else(|p| p.into_inner());
    let map = g.get_or_insert_with(HashMap::new);
    let n = map.entry(prefix).or_insert(0);
    let name = format!("{prefix}{n}");
    *n += 1;
    name
}

/// A name for a new Func: an explicit name is used as is the first time and
/// gets a `$n` suffix after that; anonymous Funcs are `f0`, `f1`, ...
pub fn unique_func_name(name: Option<&str>) -> String {
    let mut g = NAME_COUNTS.lock().unwrap_or_else(|p| p.into_inner());
    let map = g.get_or_insert_with(HashMap::new);
    match name {
        None => {
            drop(g);
            let n = unique_name('f');
            let mut g = NAME_COUNTS.lock().unwrap_or_else(|p| p.into_inner());
            g.get_or_insert_with(HashMap::new)
                .entry(n.clone())
                .or_insert(0);
            n
        }
        Some(name) => match map.get_mut(name) {
            None => {
                map.insert(name.to_string(), 1);
                name.to_string()
            }
            Some(n) => {
                let out = format!("{name}${n}");
                *n += 1;
                out
            }
        },
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
        assert!(Var::new("_3").is_implicit());
        assert!(!Var::new("x").is_implicit());
        assert!(Var::fresh().name().starts_with('v'));
    }
}
