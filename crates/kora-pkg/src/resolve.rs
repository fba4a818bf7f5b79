//! Resolving `use NAME` against the manifest that wrote it, and granting each package what its
//! importer said: a parent passes at most what it holds, and one package granted two ways by
//! two importers is refused at load. Only packages reached by `use` are resolved (and
//! fetched), so the graph is the source's, not the manifest's. Before a walk, `prefetch.rs`
//! fetches every git package the walk will reach, in parallel; the walk then reads the
//! results from `checkouts`.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use kora_check::{PackageLookup, PackageModule, Packages, Sources};
use kora_runtime::grants::Grants;

use crate::git::Store;
use crate::manifest::{GitRef, Manifest, ManifestError, Source};
use crate::prefetch::Trees;

/// One package the program reached.
#[derive(Clone, Debug)]
pub struct Reached {
    pub id: String,
    pub name: String,
    pub root: PathBuf,
    pub grants: Grants,
    /// Who granted it: `kora.toml:LINE` of the importing manifest.
    pub granted_by: String,
    /// Its `[package.helper]`, when it declares one.
    pub helper: Option<crate::helper_decl::HelperDecl>,
}

#[derive(Default)]
struct State {
    manifests: BTreeMap<PathBuf, Result<Rc<Manifest>, ManifestError>>,
    /// Package ids by canonical root.
    ids: BTreeMap<PathBuf, String>,
    reached: BTreeMap<String, Reached>,
    /// (manifest path, dependency name) pairs some `use` asked for.
    used: BTreeSet<(PathBuf, String)>,
}

/// Git checkouts already made, by (manifest path, dependency name): the tree, or why not.
pub(crate) type Checkouts = Rc<RefCell<HashMap<(PathBuf, String), Result<PathBuf, String>>>>;

/// A git dependency a survey walk reached before it was fetched.
pub(crate) struct Wanted {
    pub manifest: Rc<Manifest>,
    pub name: String,
    pub url: String,
    pub reference: GitRef,
}

/// The resolver a check asks through `kora_check::Packages`.
#[derive(Default)]
pub struct Resolver {
    state: RefCell<State>,
    pub git: Option<Store>,
    pub(crate) checkouts: Checkouts,
    /// `Some` in a survey walk (`prefetch.rs`): git dependencies not fetched yet are noted
    /// here instead of fetched.
    survey: Option<RefCell<Vec<Wanted>>>,
    /// Trees the survey parsed, for the real walk to take.
    pub(crate) trees: Trees,
}

impl Resolver {
    pub fn new(git: Option<Store>) -> Resolver {
        Resolver {
            git,
            ..Resolver::default()
        }
    }

    /// A resolver for one survey walk: fresh grants and reach, the same checkouts and trees.
    pub(crate) fn surveying(&self) -> Resolver {
        Resolver {
            checkouts: self.checkouts.clone(),
            survey: Some(RefCell::default()),
            trees: self.trees.clone(),
            ..Resolver::default()
        }
    }

    /// What a survey walk reached and found unfetched.
    pub(crate) fn wanted(self) -> Vec<Wanted> {
        self.survey.map(RefCell::into_inner).unwrap_or_default()
    }

    /// The manifest governing `dir`: the nearest `kora.toml` at or above it.
    pub fn manifest_for(&self, dir: &Path) -> Option<Result<Rc<Manifest>, ManifestError>> {
        let path = dir
            .ancestors()
            .map(|d| d.join("kora.toml"))
            .find(|p| p.is_file())?;
        let mut st = self.state.borrow_mut();
        Some(
            st.manifests
                .entry(path.clone())
                .or_insert_with(|| Manifest::read(&path).map(Rc::new))
                .clone(),
        )
    }

    /// Every package reached, by id.
    pub fn reached(&self) -> Vec<Reached> {
        self.state.borrow().reached.values().cloned().collect()
    }

    /// Whether some `use` asked `manifest` for `name`.
    pub fn was_used(&self, manifest: &Path, name: &str) -> bool {
        self.state
            .borrow()
            .used
            .contains(&(manifest.to_path_buf(), name.to_string()))
    }

    /// The grants of the code in `dir`'s package: everything for the program itself.
    fn holder(&self, manifest_dir: &Path) -> Option<(String, Grants)> {
        let canon = std::fs::canonicalize(manifest_dir).ok()?;
        let st = self.state.borrow();
        let id = st.ids.get(&canon)?;
        let r = st.reached.get(id)?;
        Some((id.clone(), r.grants.clone()))
    }

    fn find(
        &self,
        importer: &Path,
        name: &str,
        module: Option<&str>,
    ) -> Result<Option<PackageModule>, String> {
        let dir = importer.parent().unwrap_or(Path::new("."));
        let Some(m) = self.manifest_for(dir) else {
            return Ok(None);
        };
        let m = m.map_err(|e| e.to_string())?;
        let Some(dep) = m.deps.get(name) else {
            return Ok(None);
        };
        self.state
            .borrow_mut()
            .used
            .insert((m.path.clone(), name.to_string()));
        let at = match dep.line {
            Some(l) => format!("{}:{l}", m.path.display()),
            None => m.path.display().to_string(),
        };
        // A parent passes on at most what it holds, judged before anything is fetched.
        if let Some((pid, held)) = self.holder(&m.dir) {
            let missing = held.missing(&dep.grants);
            if !missing.is_empty() {
                return Err(format!(
                    "package `{pid}` grants `{name}` ({at}) what it does not hold itself: {}; a package passes on at most its own grants",
                    missing.join(", ")
                ));
            }
        }
        let root = match &dep.source {
            Source::Path { dir, written } => std::fs::canonicalize(dir).map_err(|e| {
                format!(
                    "dependency `{name}` ({at}): cannot open `{written}` ({}): {e}",
                    dir.display()
                )
            })?,
            Source::Git { url, reference } => {
                let key = (m.path.clone(), name.to_string());
                let done = self.checkouts.borrow().get(&key).cloned();
                match (done, &self.survey, &self.git) {
                    (Some(tree), _, _) => tree?,
                    (None, Some(wanted), _) => {
                        wanted.borrow_mut().push(Wanted {
                            manifest: m.clone(),
                            name: name.to_string(),
                            url: url.clone(),
                            reference: reference.clone(),
                        });
                        return Ok(None);
                    }
                    (None, None, Some(store)) => {
                        let tree = store.checkout(&m, name, url, reference);
                        self.checkouts.borrow_mut().insert(key, tree.clone());
                        tree?
                    }
                    (None, None, None) => return Err(format!("dependency `{name}` ({at}) is a git dependency; this tool reads path dependencies only")),
                }
            }
        };
        let pm = Manifest::read(&root.join("kora.toml"))
            .map_err(|e| format!("dependency `{name}` ({at}) is not a package: {e}"))?;
        match &pm.package {
            Some(p) if p.name == name => {}
            Some(p) => {
                return Err(format!(
                    "dependency `{name}` ({at}) names a package called `{}`; use that name, or fix the dependency",
                    p.name
                ))
            }
            None => {
                return Err(format!(
                    "dependency `{name}` ({at}): {} has no `[package]` table",
                    pm.path.display()
                ))
            }
        }
        let id = {
            let mut st = self.state.borrow_mut();
            match st.ids.get(&root) {
                Some(id) => id.clone(),
                None => {
                    let taken = |c: &str| st.ids.values().any(|v| v == c);
                    let mut id = name.to_string();
                    let mut n = 2;
                    while taken(&id) {
                        id = format!("{name}~{n}");
                        n += 1;
                    }
                    st.ids.insert(root.clone(), id.clone());
                    id
                }
            }
        };
        {
            let mut st = self.state.borrow_mut();
            match st.reached.get(&id) {
                Some(prev) if prev.grants != dep.grants => {
                    return Err(format!(
                        "package `{name}` is granted two ways: {} by {}, {} by {at}; grant it the same in both, since a union would widen the careful importer and an intersection would break the other",
                        prev.grants.describe(),
                        prev.granted_by,
                        dep.grants.describe()
                    ));
                }
                Some(_) => {}
                None => {
                    st.reached.insert(
                        id.clone(),
                        Reached {
                            id: id.clone(),
                            name: name.to_string(),
                            root: root.clone(),
                            grants: dep.grants.clone(),
                            granted_by: at.clone(),
                            helper: pm.package.as_ref().and_then(|p| p.helper.clone()),
                        },
                    );
                }
            }
        }
        let file = match module {
            None => root.join("lib.ko"),
            Some(md) => root.join(format!("{}.ko", md.replace('.', "/"))),
        };
        let path = std::fs::canonicalize(&file).map_err(|_| {
            format!(
                "package `{name}` has no {} ({})",
                file.file_name()
                    .map_or_else(String::new, |f| f.to_string_lossy().into_owned()),
                file.display()
            )
        })?;
        if !path.starts_with(&root) {
            return Err(format!("{} lies outside package `{name}`", path.display()));
        }
        let helper = pm.package.as_ref().is_some_and(|p| p.helper.is_some());
        Ok(Some(PackageModule {
            path,
            root,
            id,
            helper,
        }))
    }
}

impl Packages for Resolver {
    fn resolve(&self, importer: &Path, name: &str, module: Option<&str>) -> PackageLookup {
        match self.find(importer, name, module) {
            Ok(Some(m)) => PackageLookup::Found(m),
            Ok(None) => PackageLookup::NotDeclared,
            Err(why) => PackageLookup::Failed(why),
        }
    }

    fn prepare(&self, entry: &Path, sources: &dyn Sources) {
        if self.survey.is_none() {
            crate::prefetch::fetch_reached(self, entry, sources);
        }
    }
}
