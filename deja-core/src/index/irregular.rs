//! English word forms no stemmer can fold: irregular verbs (`went` for `go`, `bought`
//! for `buy`) and a few irregular plurals (`children` for `child`).
//!
//! Snowball strips suffixes, so `refreshing` and `refreshed` meet at `refresh`, but
//! `went` never meets `go`. People ask in the present ("when did she go camping?") and
//! tell in the past ("we went camping last week"), so without these the question's verb
//! matches nothing in the answer: in LoCoMo, 183 of 1,982 questions have a verb whose
//! evidence turn holds only another, irregular form of it (`get`/`got`, `make`/`made`,
//! `take`/`took`, `go`/`went`, `meet`/`met`, `buy`/`bought`, `win`/`won`, …).
//!
//! A short table rather than a crate: the lemmatizer crates on crates.io either bundle
//! a dictionary file to load at run time, carry a GPL licence, or cover one language
//! other than English; the irregular verbs of everyday English are a closed list.
//!
//! Left out on purpose: forms that are more often another word (`left`, `rose`, `bit`,
//! `lay`, `ground`, `lit`, `saw` is kept: as a tool it is rare in conversation), and the
//! verbs that are stopwords (`be`, `have`, `do`), which the relevance tier drops anyway.

/// Each group: the base form first, then every other form of it, regular or not
/// (the third person and `-ing` too, because a short base like `go` is too short to
/// find its forms by prefix in the term dictionary).
const GROUPS: &[&[&str]] = &[
    &["become", "becomes", "becoming", "became"],
    &["begin", "begins", "beginning", "began", "begun"],
    &["break", "breaks", "breaking", "broke", "broken"],
    &["bring", "brings", "bringing", "brought"],
    &["build", "builds", "building", "built"],
    &["buy", "buys", "buying", "bought"],
    &["catch", "catches", "catching", "caught"],
    &["choose", "chooses", "choosing", "chose", "chosen"],
    &["come", "comes", "coming", "came"],
    &["draw", "draws", "drawing", "drew", "drawn"],
    &["drink", "drinks", "drinking", "drank", "drunk"],
    &["drive", "drives", "driving", "drove", "driven"],
    &["eat", "eats", "eating", "ate", "eaten"],
    &["fall", "falls", "falling", "fell", "fallen"],
    &["feed", "feeds", "feeding", "fed"],
    &["feel", "feels", "feeling", "felt"],
    &["fight", "fights", "fighting", "fought"],
    &["find", "finds", "finding", "found"],
    &["fly", "flies", "flying", "flew", "flown"],
    &["forget", "forgets", "forgetting", "forgot", "forgotten"],
    &["forgive", "forgives", "forgiving", "forgave", "forgiven"],
    &["freeze", "freezes", "freezing", "froze", "frozen"],
    &["get", "gets", "getting", "got", "gotten"],
    &["give", "gives", "giving", "gave", "given"],
    &["go", "goes", "going", "went", "gone"],
    &["grow", "grows", "growing", "grew", "grown"],
    &["hang", "hangs", "hanging", "hung"],
    &["hear", "hears", "hearing", "heard"],
    &["hide", "hides", "hiding", "hid", "hidden"],
    &["hold", "holds", "holding", "held"],
    &["keep", "keeps", "keeping", "kept"],
    &["know", "knows", "knowing", "knew", "known"],
    &["lead", "leads", "leading", "led"],
    &["lend", "lends", "lending", "lent"],
    &["lose", "loses", "losing", "lost"],
    &["make", "makes", "making", "made"],
    &["mean", "means", "meaning", "meant"],
    &["meet", "meets", "meeting", "met"],
    &["pay", "pays", "paying", "paid"],
    &["ride", "rides", "riding", "rode", "ridden"],
    &["ring", "rings", "ringing", "rang", "rung"],
    &["rise", "rises", "rising", "risen"],
    &["run", "runs", "running", "ran"],
    &["say", "says", "saying", "said"],
    &["see", "sees", "seeing", "saw", "seen"],
    &["seek", "seeks", "seeking", "sought"],
    &["sell", "sells", "selling", "sold"],
    &["send", "sends", "sending", "sent"],
    &["shake", "shakes", "shaking", "shook", "shaken"],
    &["shoot", "shoots", "shooting", "shot"],
    &["show", "shows", "showing", "showed", "shown"],
    &["sing", "sings", "singing", "sang", "sung"],
    &["sit", "sits", "sitting", "sat"],
    &["sleep", "sleeps", "sleeping", "slept"],
    &["speak", "speaks", "speaking", "spoke", "spoken"],
    &["spend", "spends", "spending", "spent"],
    &["stand", "stands", "standing", "stood"],
    &["steal", "steals", "stealing", "stole", "stolen"],
    &["swim", "swims", "swimming", "swam", "swum"],
    &["take", "takes", "taking", "took", "taken"],
    &["teach", "teaches", "teaching", "taught"],
    &["tell", "tells", "telling", "told"],
    &["think", "thinks", "thinking", "thought"],
    &["throw", "throws", "throwing", "threw", "thrown"],
    &["understand", "understands", "understanding", "understood"],
    &["wake", "wakes", "waking", "woke", "woken"],
    &["wear", "wears", "wearing", "wore", "worn"],
    &["win", "wins", "winning", "won"],
    &["write", "writes", "writing", "wrote", "written"],
    &["child", "children"],
    &["man", "men"],
    &["woman", "women"],
    &["person", "people"],
];

/// The group holding `word` (lowercase), base form first.
pub fn group_of(word: &str) -> Option<&'static [&'static str]> {
    // Asked for every word of a shown turn when a search says which words matched.
    static BY_FORM: std::sync::LazyLock<std::collections::HashMap<&'static str, usize>> =
        std::sync::LazyLock::new(|| GROUPS.iter().enumerate().flat_map(|(i, g)| g.iter().map(move |f| (*f, i))).collect());
    BY_FORM.get(word).map(|&i| GROUPS[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_is_in_one_group_only() {
        let mut seen = std::collections::HashSet::new();
        for g in GROUPS {
            for f in *g {
                assert!(seen.insert(*f), "{f} is in two groups");
                assert!(f.bytes().all(|b| b.is_ascii_lowercase()), "{f}");
            }
        }
        assert_eq!(group_of("went").map(|g| g[0]), Some("go"));
        assert_eq!(group_of("children").map(|g| g[0]), Some("child"));
        assert_eq!(group_of("left"), None, "more often a direction than `leave`");
    }
}
