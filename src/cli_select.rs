//! `--select`, `--extend-select` and `--ignore`: which rules run, in ruff's manner. A selector
//! names rules by id (`RA002`, any case), by name (`fixed-delay`), by id prefix (`RA00`: RA000
//! to RA009) or `ALL`. `--select` keeps only the rules it names, `--extend-select` adds rules to
//! those, `--ignore` takes rules away, and a rule named by both is ignored. Selection only turns rules off: it is applied on top of the levels (rule
//! defaults, the configuration, `--allow`/`--warn`/`--deny`), so a selected rule still runs at
//! the level those give it, and a rule they set to `allow` stays off.

use retry_audit::{Level, Rule, Settings};

/// The rules one `--select` or `--ignore` value names (never empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Selector(Vec<Rule>);

/// Parses one selector (clap splits the flag's value at commas first).
pub(crate) fn parse_selector(text: &str) -> Result<Selector, String> {
    let code = text.trim();
    if code.is_empty() {
        return Err("empty rule selector; expected a rule id, name or id prefix (RA00)".into());
    }
    if code == "ALL" {
        return Ok(Selector(Rule::ALL.to_vec()));
    }
    if let Some(rule) = Rule::from_code(code) {
        return Ok(Selector(vec![rule]));
    }
    let prefix = code.to_ascii_uppercase();
    let matching: Vec<Rule> = Rule::ALL
        .iter()
        .copied()
        .filter(|rule| rule.id().starts_with(&prefix))
        .collect();
    if matching.is_empty() {
        Err(format!(
            "no rule matches `{code}`; give a rule id, name or id prefix (e.g. RA00), or ALL; \
             valid rules are {}",
            retry_audit::report::render::valid_rules()
        ))
    } else {
        Ok(Selector(matching))
    }
}

/// The rules that run: those `select` and `extend` name (every rule when `select` is empty)
/// less those `ignore` names.
pub(crate) fn selected(select: &[Selector], extend: &[Selector], ignore: &[Selector]) -> Vec<Rule> {
    let named = |selectors: &[Selector], rule: Rule| selectors.iter().any(|s| s.0.contains(&rule));
    Rule::ALL
        .iter()
        .copied()
        .filter(|&rule| {
            (select.is_empty() || named(select, rule) || named(extend, rule))
                && !named(ignore, rule)
        })
        .collect()
}

/// Turns off, in the command line's settings (which override the configuration everywhere),
/// every rule that is not selected.
pub(crate) fn apply(
    select: &[Selector],
    extend: &[Selector],
    ignore: &[Selector],
    settings: &mut Settings,
) {
    let run = selected(select, extend, ignore);
    for &rule in Rule::ALL {
        if !run.contains(&rule) {
            settings.set_level(rule, Level::Allow);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(code: &str) -> Selector {
        parse_selector(code).unwrap_or_else(|e| panic!("{code}: {e}"))
    }

    fn ids(rules: &[Rule]) -> Vec<&'static str> {
        rules.iter().map(|r| r.id()).collect()
    }

    #[test]
    fn a_selector_is_an_id_a_name_a_prefix_or_all() {
        assert_eq!(sel("RA002"), Selector(vec![Rule::FixedDelay]));
        assert_eq!(sel("ra002"), Selector(vec![Rule::FixedDelay]));
        assert_eq!(sel("fixed-delay"), Selector(vec![Rule::FixedDelay]));
        assert_eq!(
            ids(&sel("RA00").0),
            [
                "RA000", "RA001", "RA002", "RA003", "RA004", "RA005", "RA006", "RA007", "RA008",
                "RA009"
            ]
        );
        assert_eq!(ids(&sel("RA1").0), ["RA100"]);
        assert_eq!(sel("ALL").0, Rule::ALL);
        assert_eq!(sel("RA").0, Rule::ALL);
    }

    #[test]
    fn a_selector_matching_nothing_is_an_error() {
        for bad in ["RA9", "RA0000", "fixed", "", " ", "all-rules"] {
            let error = parse_selector(bad).expect_err(bad);
            assert!(
                error.contains("rule") && error.contains("RA00"),
                "{bad}: {error}"
            );
        }
    }

    #[test]
    fn ignore_wins_over_select() {
        let all = selected(&[], &[], &[]);
        assert_eq!(all, Rule::ALL);
        assert_eq!(
            ids(&selected(
                &[sel("RA00")],
                &[],
                &[sel("RA002"), sel("missing-jitter")]
            )),
            ["RA000", "RA001", "RA004", "RA005", "RA006", "RA007", "RA008", "RA009"]
        );
        assert!(selected(&[sel("RA002")], &[], &[sel("RA00")]).is_empty());
        assert_eq!(
            ids(&selected(&[sel("RA002")], &[sel("RA001")], &[])),
            ["RA001", "RA002"],
            "extend-select adds to select"
        );
        assert_eq!(selected(&[], &[sel("RA001")], &[]), Rule::ALL);
        assert_eq!(
            ids(&selected(&[], &[], &[sel("RA0")])),
            ["RA100"],
            "ignore alone removes from every rule"
        );
    }

    #[test]
    fn rules_not_selected_are_allowed_and_the_others_keep_their_level() {
        let mut settings = Settings::default();
        settings.set_level(Rule::FixedDelay, Level::Error);
        settings.set_level(Rule::UnboundedRetry, Level::Error);
        apply(
            &[sel("RA002"), sel("RA003")],
            &[],
            &[sel("RA003")],
            &mut settings,
        );
        assert_eq!(settings.level(Rule::FixedDelay), Level::Error);
        assert_eq!(settings.level(Rule::MissingJitter), Level::Allow);
        assert_eq!(settings.level(Rule::UnboundedRetry), Level::Allow);
        assert_eq!(settings.level(Rule::UnusedSuppression), Level::Allow);
    }
}
