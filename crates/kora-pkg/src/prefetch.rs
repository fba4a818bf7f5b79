//! Fetching every git package a program reaches at once, before the check walks it.
//!
//! The loader asks for packages one `use` at a time, depth first, so fetching as it asks would
//! fetch one repository at a time. Instead a survey walks the program first with a resolver that
//! notes each git dependency it reaches rather than fetching it; everything noted is fetched in
//! parallel (a worker per repository, at most `fan_out::LIMIT` at once), and the survey walks again to find what those packages
//! reach in turn. When a survey notes nothing new, the real walk runs and finds every checkout
//! made. The survey is the loader itself, so it reaches exactly what the walk will: a declared
//! dependency no `use` reaches is never fetched, and a grant refused before fetching is refused
//! here too. Trees the survey parsed are kept for the real walk, so nothing is parsed twice.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use kora_check::{Packages, Sources};
use kora_syntax::Parsed;

use crate::fan_out;
use crate::git::{absolute_url, Store};
use crate::manifest::{GitRef, Manifest, Source};
use crate::resolve::{Resolver, Wanted};

/// Parsed files by canonical path, with the text they were parsed from.
pub(crate) type Trees = Rc<RefCell<HashMap<PathBuf, (String, Parsed)>>>;

/// A graph deeper than this many levels of git packages has the rest fetched by the walk
/// itself, one at a time: still correct, only slower.
const MAX_ROUNDS: usize = 32;

/// Fetches every git package the walk from `entry` will reach, level by level.
pub(crate) fn fetch_reached(real: &Resolver, entry: &Path, sources: &dyn Sources) {
    let Some(store) = &real.git else {
        return;
    };
    let dir = entry
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    if !declares_git(real, &dir) {
        return;
    }
    for _ in 0..MAX_ROUNDS {
        let survey = real.surveying();
        let view = Survey {
            inner: sources,
            resolver: &survey,
        };
        // The survey's diagnostics are the real walk's to report.
        let _ = kora_check::loader::load(entry, &view);
        let mut seen = BTreeSet::new();
        let wanted: Vec<Wanted> = survey
            .wanted()
            .into_iter()
            .filter(|w| seen.insert((w.manifest.path.clone(), w.name.clone())))
            .collect();
        if wanted.is_empty() {
            return;
        }
        let fetched = fetch_parallel(store, &wanted);
        let mut done = real.checkouts.borrow_mut();
        let before = done.len();
        for (w, tree) in wanted.iter().zip(fetched) {
            if let Some(tree) = tree {
                done.insert((w.manifest.path.clone(), w.name.clone()), tree);
            }
        }
        // Nothing new (every fetch of this round died): the walk fetches what is left itself.
        if done.len() == before {
            return;
        }
    }
}

/// Whether the manifest governing `dir`, or one its path dependencies lead to, names a git
/// dependency: only then can a survey save anything.
fn declares_git(r: &Resolver, dir: &Path) -> bool {
    let mut todo = vec![dir.to_path_buf()];
    let mut seen = BTreeSet::new();
    while let Some(d) = todo.pop() {
        let Some(Ok(m)) = r.manifest_for(&d) else {
            continue;
        };
        if !seen.insert(m.path.clone()) {
            continue;
        }
        for dep in m.deps.values() {
            match &dep.source {
                Source::Git { .. } => return true,
                Source::Path { dir, .. } => todo.push(dir.clone()),
            }
        }
    }
    false
}

/// One checkout per wanted dependency, in order (`None` if its worker died: the walk fetches it
/// again and reports what it finds). Dependencies on one repository are fetched by one worker,
/// one after the other, since a repository's cache folder takes one writer at a time.
fn fetch_parallel(store: &Store, wanted: &[Wanted]) -> Vec<Option<Result<PathBuf, String>>> {
    type Job<'a> = (usize, &'a Manifest, &'a str, &'a str, &'a GitRef);
    let mut by_repo: BTreeMap<String, Vec<Job>> = BTreeMap::new();
    for (i, w) in wanted.iter().enumerate() {
        by_repo
            .entry(absolute_url(&w.url, &w.manifest.dir))
            .or_default()
            .push((i, &*w.manifest, &w.name, &w.url, &w.reference));
    }
    let groups: Vec<Vec<Job>> = by_repo.into_values().collect();
    let done = fan_out::each(&groups, |jobs| {
        jobs.iter()
            .map(|&(i, m, name, url, reference)| (i, store.checkout(m, name, url, reference)))
            .collect::<Vec<_>>()
    });
    let mut out = vec![None; wanted.len()];
    for (i, tree) in done.into_iter().flatten().flatten() {
        out[i] = Some(tree);
    }
    out
}

/// The sources a survey walk reads through: the caller's, with the surveying resolver, keeping
/// every tree it parses.
struct Survey<'a> {
    inner: &'a dyn Sources,
    resolver: &'a Resolver,
}

impl Sources for Survey<'_> {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        self.inner.read(path)
    }
    fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
        self.inner.canonicalize(path)
    }
    fn packages(&self) -> Option<&dyn Packages> {
        Some(self.resolver)
    }
    fn parse(&self, path: &Path, text: &str) -> Parsed {
        if let Some((was, parsed)) = self.resolver.trees.borrow().get(path) {
            if was == text {
                return parsed.clone();
            }
        }
        // Not borrowed across this call: the caller's own `parse` may look at the trees too.
        let parsed = self.inner.parse(path, text);
        self.resolver
            .trees
            .borrow_mut()
            .insert(path.to_path_buf(), (text.to_string(), parsed.clone()));
        parsed
    }
}

/// The tree a survey parsed from exactly `text`, handed over once.
pub(crate) fn take_tree(r: &Resolver, path: &Path, text: &str) -> Option<Parsed> {
    let mut trees = r.trees.borrow_mut();
    match trees.get(path) {
        Some((was, _)) if was == text => trees.remove(path).map(|(_, p)| p),
        _ => None,
    }
}
