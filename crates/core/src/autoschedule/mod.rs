//! Autoscheduling: choose a schedule for a whole pipeline from the
//! estimates of its outputs and inputs (Halide's
//! `Pipeline::apply_autoscheduler`).
//!
//! Halide loads its autoschedulers (Adams2019, Li2018, Mullapudi2016) as
//! C++ plugins; ferrohalide cannot load those, and has one algorithm of its
//! own, built in (`rules`). It answers to the names Halide's Python users
//! ask for, so a generator written for Halide (`autoscheduler=Adams2019`)
//! builds and runs; each request says, in a warning, that ferrohalide's
//! rules made the schedule, not the named search. Each name takes the
//! parameters Halide's scheduler of that name takes (others are Halide's
//! "unknown keys" error); `parallelism` is the one the rules use.
//!
//! Assumes: the outputs are defined. Guarantees: every directive applied
//! went through the scheduling API (so it was validated there); Funcs and
//! stages the user already scheduled are left as they are; the schedule
//! is described as C++ in `schedule_source`.

mod estimate_regions;
mod rules;

use std::collections::BTreeMap;

use crate::error::{user_warning, Error, Result};
use crate::lang::function::Function;
use crate::target::Target;

pub use estimate_regions::{estimate_regions, Extents};

/// Which autoscheduler to run, and its settings as text (Halide's
/// `AutoschedulerParams`).
#[derive(Clone, Debug, Default)]
pub struct AutoschedulerParams {
    pub name: String,
    pub extra: BTreeMap<String, String>,
}

/// What an autoscheduler did (Halide's `AutoSchedulerResults`).
#[derive(Clone, Debug)]
pub struct AutoSchedulerResults {
    pub target: Target,
    pub params: AutoschedulerParams,
    /// The schedule as C++ applying it to the pipeline.
    pub schedule_source: String,
}

/// The names ferrohalide answers to, with the parameters Halide's scheduler
/// of that name parses.
const NAMES: &[(&str, &[&str])] = &[
    (
        "Adams2019",
        &[
            "parallelism",
            "beam_size",
            "random_dropout",
            "random_dropout_seed",
            "weights_path",
            "disable_subtiling",
            "disable_memoized_features",
            "disable_memoized_blocks",
            "memory_limit",
        ],
    ),
    ("Li2018", &["parallelism"]),
    (
        "Mullapudi2016",
        &["parallelism", "last_level_cache_size", "balance", "experimental_gpu_schedule"],
    ),
];

/// The autoscheduler names `apply_autoscheduler` accepts.
pub fn known_names() -> Vec<&'static str> {
    NAMES.iter().map(|(n, _)| *n).collect()
}

/// Settings of the rules, parsed from the params' text.
#[derive(Clone, Debug)]
pub struct RuleParams {
    /// How many threads the target machine runs at once: the rules aim at
    /// about 8 parallel tasks per thread.
    pub parallelism: i64,
}

fn parse_params(params: &AutoschedulerParams) -> Result<RuleParams> {
    let Some((_, keys)) = NAMES.iter().find(|(n, _)| *n == params.name) else {
        let mut msg = format!(
            "Unknown autoscheduler name '{}'; known names are:\n",
            params.name
        );
        for n in known_names() {
            msg.push_str(&format!("    {n}\n"));
        }
        return Err(Error::user(msg));
    };
    let unknown: Vec<&String> = params.extra.keys().filter(|k| !keys.contains(&k.as_str())).collect();
    if !unknown.is_empty() {
        let mut msg = "Autoscheduler Params contain unknown keys:\n".to_string();
        for k in unknown {
            msg.push_str(&format!("  {k}\n"));
        }
        return Err(Error::user(msg));
    }
    // Halide's defaults: 16 threads for Mullapudi2016 and Li2018, and for
    // Adams2019 too.
    let mut rp = RuleParams { parallelism: 16 };
    for (k, v) in &params.extra {
        let ok = match k.as_str() {
            "parallelism" => match v.trim().parse::<i64>() {
                Ok(n) if n > 0 => {
                    rp.parallelism = n;
                    true
                }
                _ => false,
            },
            "random_dropout_seed" | "beam_size" | "random_dropout" | "last_level_cache_size" | "balance"
            | "memory_limit" => v.trim().parse::<i64>().is_ok(),
            "disable_subtiling" | "disable_memoized_features" | "disable_memoized_blocks"
            | "experimental_gpu_schedule" => matches!(v.trim(), "0" | "1" | "true" | "false"),
            _ => true, // weights_path: any text
        };
        if !ok {
            return Err(Error::user(format!("Unable to parse: {v}\n")));
        }
    }
    Ok(rp)
}

/// Schedule the pipeline of `outputs` for `target` (see the module comment).
pub fn apply_autoscheduler(
    outputs: &[Function],
    target: &Target,
    params: &AutoschedulerParams,
) -> Result<AutoSchedulerResults> {
    if params.name.is_empty() {
        return Err(Error::user(
            "apply_autoscheduler was called with no Autoscheduler specified.".to_string(),
        ));
    }
    let rule_params = parse_params(params)?;
    let unused: Vec<&String> = params.extra.keys().filter(|k| k.as_str() != "parallelism").collect();
    let mut note = format!(
        "ferrohalide has no '{}' autoscheduler: its own rules (pointwise and trivial Funcs inlined, the others computed at root, their innermost dimension vectorized and the others fused and parallelized) schedule this pipeline instead of {}'s search.",
        params.name, params.name
    );
    if !unused.is_empty() {
        let names: Vec<&str> = unused.iter().map(|s| s.as_str()).collect();
        note.push_str(&format!(" Those rules do not use: {}.", names.join(", ")));
    }
    user_warning(&format!("{note}\n"));
    let schedule_source = rules::schedule_pipeline(outputs, target, &rule_params)?;
    Ok(AutoSchedulerResults {
        target: target.clone(),
        params: params.clone(),
        schedule_source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(name: &str, extra: &[(&str, &str)]) -> AutoschedulerParams {
        AutoschedulerParams {
            name: name.into(),
            extra: extra.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        }
    }

    #[test]
    fn each_name_takes_its_own_parameters() {
        assert_eq!(parse_params(&params("Li2018", &[("parallelism", "32")])).unwrap().parallelism, 32);
        assert!(parse_params(&params("Li2018", &[("balance", "40")])).is_err());
        assert!(parse_params(&params("Mullapudi2016", &[("balance", "40")])).is_ok());
        assert!(parse_params(&params("Adams2019", &[("parallelism", "x")])).is_err());
        assert!(parse_params(&params("Adams2019", &[("parallelism", "0")])).is_err());
        let e = parse_params(&params("Nope", &[])).unwrap_err().to_string();
        assert!(e.contains("Unknown autoscheduler name 'Nope'") && e.contains("Mullapudi2016"), "{e}");
    }
}
