//! `loc`: lines of code of the OpLog versions of the texts' structures against hand-made
//! per-core versions and the stock versions (000 §7.4, Figure 13), counted in the sources.
//!
//! 000 §7.4 counts the lines added or modified to make three Linux subsystems scale:
//! per-core versions of the rmap (473 lines), inotify (242) and the open-files list (133),
//! OpLog versions of the same (45, 11, 8), which "do not include type-specific
//! optimizations, only calls to synchronize and log". This experiment counts the same in
//! this tree, at run time, from the sources of the workspace the binary was built from
//! (found through `CARGO_MANIFEST_DIR`, else in the current directory): for each
//! structure, the items that make each version (its types and their `impl` blocks), as
//! listed in [`VERSIONS`].
//!
//! What is counted:
//!
//! - a *code line* is a non-blank line that is not only a comment (line, doc or block
//!   comment): attributes count, documentation does not ([`code_lines`]);
//! - a version's lines are those of its own items. What every version of a structure
//!   shares is in none of them (the sequential structure itself: the interval tree, the
//!   `VecDeque`, the hash set; the structure's trait; helpers such as `truncate_tree`),
//!   since the text counts the changes to the stock code, not the code they all keep;
//! - the OpLog versions leave out `logged_set.rs`, the adapter that gives the rmap, the
//!   open-file list and the linked lists their absorption (000 §5.2: a type-specific
//!   optimization, which Figure 13 leaves out); it has its own `shared` row in `items`;
//! - a whole-file version (the sloppy counter, a module of its own) counts every line of
//!   the file outside its `#[cfg(test)]` items.
//!
//! Annexes: `figure-13`, one row per structure and hand-made per-core version: the
//! per-core, OpLog and stock lines, the per-core / OpLog ratio, and the text's figures
//! beside; `items`, every item counted (version, file, item, first and last line, code
//! lines). This tree has no hand-made per-core rmap or inotify queue (their baselines are
//! one lock and a lock-free structure), so those rows have no per-core count, say so in a
//! note, and keep the text's figures; the counter, not in Figure 13, is added because the
//! tree has two hand-made per-core counters (004 §4.3's sloppy counter and the `counter`
//! experiment's padded atomic per CPU).
//!
//! **Finding items.** The sources are formatted by rustfmt (CI checks it), which puts a
//! top-level item's header at column 0 after its attributes and doc comments, and the line
//! that closes a multi-line item (`}`, `)` or `]`) at column 0 too, with only a `where` or
//! a lone `{` at column 0 in between. [`items`] relies on that layout, not on a parser:
//! an item starts at a column-0 line that is not a comment or attribute, and ends on that
//! line if it ends in `;` or a balanced `{…}`, else at the next closing line at column 0,
//! else just before the next item. An `impl` block is named after its self type
//! (`impl<E> EventQueue<E> for OpLogQueue<E>` is `OpLogQueue`). A name in [`VERSIONS`]
//! that matches no item is an error naming the file and the item, so a renamed type fails
//! the run (and this module's tests) instead of counting nothing.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::experiments::Experiment;
use crate::harness::Settings;
use crate::output::{Annex, Sink, round};

/// The part a version plays beside the others of its structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Written on OpLog.
    OpLog,
    /// A hand-made per-core version.
    PerCore,
    /// The stock design: one lock, or one shared atomic.
    Stock,
    /// Support the OpLog versions share, left out of their counts (type-specific
    /// optimizations).
    Shared,
}

impl Role {
    /// The role's name in the annexes.
    pub fn name(self) -> &'static str {
        match self {
            Role::OpLog => "oplog",
            Role::PerCore => "per-core",
            Role::Stock => "stock",
            Role::Shared => "shared",
        }
    }
}

/// Which lines of a file make a version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    /// The top-level items with these names (types, aliases, functions) and every `impl`
    /// block whose self type has one of them.
    Items(&'static [&'static str]),
    /// Every line of the file outside its `#[cfg(test)]` items.
    File,
}

/// One version of a structure, and where its code is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Version {
    /// The structure, as the `figure-13` annex names it.
    pub structure: &'static str,
    /// The version's id (the `oplog-bench` id where an experiment measures it).
    pub id: &'static str,
    /// Its role.
    pub role: Role,
    /// The file, relative to the workspace root.
    pub file: &'static str,
    /// Its lines in that file.
    pub selection: Selection,
}

/// A structure of 000 Figure 13, with the text's counts (per-core, OpLog).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Structure {
    /// The name [`Version::structure`] uses.
    pub name: &'static str,
    /// 000 Figure 13's (per-core, OpLog) lines, where the figure has the structure.
    pub text: Option<(u64, u64)>,
}

/// The structures, in annex order.
pub const STRUCTURES: [Structure; 4] = [
    Structure { name: "rmap", text: Some((473, 45)) },
    Structure { name: "inotify", text: Some((242, 11)) },
    Structure { name: "open files list", text: Some((133, 8)) },
    Structure { name: "counter", text: None },
];

const RMAP: &str = "crates/structures/src/rmap/mod.rs";
const NOTIFY: &str = "crates/structures/src/notify.rs";
const OPEN_FILES: &str = "crates/structures/src/open_files.rs";
const COUNTER_BASELINES: &str = "crates/oplog-bench/src/experiments/counter/baselines.rs";

/// Every version counted.
pub const VERSIONS: [Version; 11] = [
    Version {
        structure: "rmap",
        id: "oplog",
        role: Role::OpLog,
        file: RMAP,
        selection: Selection::Items(&["Kind", "OpLogRmap", "OrderedOpLogRmap"]),
    },
    Version {
        structure: "rmap",
        id: "mutex",
        role: Role::Stock,
        file: RMAP,
        selection: Selection::Items(&["MutexRmap"]),
    },
    Version {
        structure: "inotify",
        id: "oplog",
        role: Role::OpLog,
        file: NOTIFY,
        selection: Selection::Items(&["Enqueue", "Kind", "OpLogQueue"]),
    },
    Version {
        structure: "inotify",
        id: "mutex",
        role: Role::Stock,
        file: NOTIFY,
        selection: Selection::Items(&["MutexQueue"]),
    },
    Version {
        structure: "open files list",
        id: "oplog",
        role: Role::OpLog,
        file: OPEN_FILES,
        selection: Selection::Items(&["Kind", "OpLogOpenFiles"]),
    },
    Version {
        structure: "open files list",
        id: "percore",
        role: Role::PerCore,
        file: OPEN_FILES,
        selection: Selection::Items(&["PerCoreOpenFiles"]),
    },
    Version {
        structure: "open files list",
        id: "mutex",
        role: Role::Stock,
        file: OPEN_FILES,
        selection: Selection::Items(&["MutexOpenFiles"]),
    },
    Version {
        structure: "counter",
        id: "oplog",
        role: Role::OpLog,
        file: "crates/oplog/src/counter.rs",
        selection: Selection::Items(&["Counter"]),
    },
    Version {
        structure: "counter",
        id: "sloppy",
        role: Role::PerCore,
        file: "crates/refcount/src/sloppy.rs",
        selection: Selection::File,
    },
    Version {
        structure: "counter",
        id: "percore-atomic",
        role: Role::PerCore,
        file: COUNTER_BASELINES,
        selection: Selection::Items(&["PerCoreAtomicCounter"]),
    },
    Version {
        structure: "counter",
        id: "atomic",
        role: Role::Stock,
        file: COUNTER_BASELINES,
        selection: Selection::Items(&["AtomicCounter"]),
    },
];

/// The support the OpLog set versions share (listed in `items`, counted in none of them).
pub const SHARED: Version = Version {
    structure: "rmap, open files list",
    id: "logged-set",
    role: Role::Shared,
    file: "crates/structures/src/logged_set.rs",
    selection: Selection::File,
};

/// A top-level item of a Rust source file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// The name it is selected by: a type's, alias's, function's or constant's; for an
    /// `impl` block its self type's; empty for a macro call or a `use`.
    pub name: String,
    /// Whether a `#[cfg(...)]` attribute limits it to tests.
    pub test_only: bool,
    /// Its first line, 1-based: its first attribute, else its header.
    pub first: usize,
    /// Its last line, 1-based.
    pub last: usize,
}

/// Whether `line` is blank or only a comment.
fn is_comment_or_blank(line: &str) -> bool {
    let t = line.trim_start();
    t.is_empty() || t.starts_with("//")
}

/// `text`'s net count of `open` minus `close` characters.
fn depth(text: &str, open: char, close: char) -> i64 {
    text.chars().map(|c| i64::from(c == open) - i64::from(c == close)).sum()
}

/// Whether a `#[cfg(...)]` attribute's text keeps its item to test builds.
fn is_test_cfg(attribute: &str) -> bool {
    let compact: String = attribute.chars().filter(|c| !c.is_whitespace()).collect();
    compact.starts_with("#[cfg(")
        && !compact.contains("not(test")
        && compact.split(|c: char| !c.is_alphanumeric() && c != '_').any(|w| w == "test")
}

/// The top-level items of rustfmt-formatted Rust `source`, in order (see the module docs
/// for the layout relied on).
pub fn items(source: &str) -> Vec<Item> {
    let lines: Vec<&str> = source.lines().collect();
    let at_col0 = |i: usize| lines[i].chars().next().is_some_and(|c| !c.is_whitespace());
    let mut items = Vec::new();
    let mut i = 0;
    let mut attributes: Option<(usize, bool)> = None;
    while i < lines.len() {
        let line = lines[i];
        if !at_col0(i) || is_comment_or_blank(line) || line.starts_with("#!") {
            i += 1;
            continue;
        }
        if line.starts_with("#[") {
            // An attribute, perhaps over several lines: to its balanced `]`.
            let start = i;
            let mut text = line.to_owned();
            while depth(&text, '[', ']') > 0 && i + 1 < lines.len() {
                i += 1;
                text.push_str(lines[i]);
            }
            let (first, test) = attributes.unwrap_or((start + 1, false));
            attributes = Some((first, test || is_test_cfg(&text)));
            i += 1;
            continue;
        }
        let header = i;
        let trimmed = line.trim_end();
        let one_line = trimmed.ends_with(';')
            || (trimmed.ends_with('}') && depth(trimmed, '{', '}') == 0 && trimmed.contains('{'));
        let mut last = header;
        if !one_line {
            let mut j = header + 1;
            loop {
                if j >= lines.len() {
                    last = lines.len() - 1;
                    break;
                }
                if at_col0(j) && !is_comment_or_blank(lines[j]) {
                    let l = lines[j];
                    if l.starts_with('}') || l.starts_with(')') || l.starts_with(']') {
                        last = j;
                        break;
                    }
                    if !(l.starts_with('{') || l.starts_with("where")) {
                        // The item ended with a `;` on an indented line: back up over the
                        // blank lines and comments that precede the next item.
                        last = j - 1;
                        while last > header && is_comment_or_blank(lines[last]) {
                            last -= 1;
                        }
                        break;
                    }
                }
                j += 1;
            }
        }
        // The header: its lines up to the one that opens the body or ends the item.
        let mut header_text = String::new();
        for l in &lines[header..=last] {
            header_text.push_str(l.trim());
            header_text.push(' ');
            if l.trim_end().ends_with('{') || l.trim_end().ends_with(';') {
                break;
            }
        }
        let (first, test_only) = attributes.take().unwrap_or((header + 1, false));
        items.push(Item { name: item_name(&header_text), test_only, first, last: last + 1 });
        i = last + 1;
    }
    items
}

/// Removes a leading `<...>` group (balanced, `->` inside it not counted) from `s`.
fn strip_generics(s: &str) -> &str {
    let s = s.trim_start();
    if !s.starts_with('<') {
        return s;
    }
    let mut level = 0;
    let mut previous = ' ';
    for (at, c) in s.char_indices() {
        match c {
            '<' => level += 1,
            '>' if previous != '-' => {
                level -= 1;
                if level == 0 {
                    return &s[at + 1..];
                }
            }
            _ => {}
        }
        previous = c;
    }
    ""
}

/// The last path segment of the type at the start of `s` (`&`, `dyn`, `!` stripped).
fn type_name(s: &str) -> String {
    let mut s = s.trim_start();
    for prefix in ["&mut ", "&", "dyn ", "!"] {
        s = s.strip_prefix(prefix).unwrap_or(s).trim_start();
    }
    let path: String = s.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
    path.rsplit("::").next().unwrap_or("").to_owned()
}

/// The name of the item whose header (joined lines) is `header`.
fn item_name(header: &str) -> String {
    let mut rest = header.trim_start();
    if let Some(r) = rest.strip_prefix("pub") {
        rest = if r.starts_with('(') { r.split_once(')').map_or("", |(_, r)| r) } else { r };
    }
    let mut words = rest.split_whitespace();
    let mut word = words.next().unwrap_or("");
    while matches!(word, "unsafe" | "async" | "default" | "extern" | "\"C\"")
        || (word == "const" && rest.split_whitespace().any(|w| w == "fn"))
    {
        word = words.next().unwrap_or("");
    }
    let ident = |w: Option<&str>| -> String {
        w.unwrap_or("").chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
    };
    match word {
        "struct" | "enum" | "union" | "trait" | "type" | "fn" | "mod" | "const" | "static" => {
            let next = words.next();
            if word == "static" && next == Some("mut") { ident(words.next()) } else { ident(next) }
        }
        w if w == "impl" || w.starts_with("impl<") => {
            let after = header.split_once("impl").map_or("", |(_, r)| r);
            let after = strip_generics(after);
            // ` for ` outside angle brackets separates the trait from the self type.
            let mut level = 0;
            let bytes = after.as_bytes();
            let mut self_type = after;
            for (at, c) in after.char_indices() {
                match c {
                    '<' => level += 1,
                    '>' if at == 0 || bytes[at - 1] != b'-' => level -= 1,
                    _ if level == 0 && after[at..].starts_with(" for ") => {
                        self_type = &after[at + 5..];
                        break;
                    }
                    _ => {}
                }
            }
            type_name(self_type)
        }
        _ => String::new(),
    }
}

/// The code lines among `lines`, trimmed: those not blank and not only a comment (`//`,
/// `///`, `//!`, or the inside of a `/* … */` block).
pub fn code_lines<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut in_block = false;
    let mut code = Vec::new();
    for line in lines {
        let mut rest = line.trim();
        let mut is_code = false;
        while !rest.is_empty() {
            if in_block {
                match rest.find("*/") {
                    Some(end) => {
                        in_block = false;
                        rest = rest[end + 2..].trim_start();
                    }
                    None => rest = "",
                }
            } else if rest.starts_with("//") {
                rest = "";
            } else if let Some(r) = rest.strip_prefix("/*") {
                in_block = true;
                rest = r;
            } else {
                is_code = true;
                rest = "";
            }
        }
        if is_code {
            code.push(line.trim());
        }
    }
    code
}

/// `line` with every identifier in `names` replaced by `Self`, so that two versions' lines
/// compare equal when they differ only in the type's name.
fn normalized(line: &str, names: &[&str]) -> String {
    let mut out = String::with_capacity(line.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        out.push_str(if names.contains(&word.as_str()) { "Self" } else { word });
        word.clear();
    };
    for c in line.chars() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// The lines of `version` that are not in `base`: its code lines less the longest common
/// subsequence of the two (as `diff` counts added and modified lines), after
/// each one's type names are replaced by `Self`.
pub fn changed_lines(version: &[String], version_names: &[&str], base: &[String], base_names: &[&str]) -> usize {
    let a: Vec<String> = version.iter().map(|l| normalized(l, version_names)).collect();
    let b: Vec<String> = base.iter().map(|l| normalized(l, base_names)).collect();
    // lcs[j]: the longest common subsequence of the rows so far and b[..j].
    let mut lcs = vec![0usize; b.len() + 1];
    for x in &a {
        let mut diagonal = 0;
        for (j, y) in b.iter().enumerate() {
            let above = lcs[j + 1];
            lcs[j + 1] = if x == y { diagonal + 1 } else { above.max(lcs[j]) };
            diagonal = above;
        }
    }
    a.len() - lcs[b.len()]
}

/// One counted piece of a version: an item, or a whole file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counted {
    /// The item's name (`*` for a whole file).
    pub item: String,
    /// First line, 1-based.
    pub first: usize,
    /// Last line, 1-based.
    pub last: usize,
    /// Its code lines, trimmed ([`code_lines`]).
    pub code: Vec<String>,
}

impl Counted {
    /// The number of code lines.
    pub fn loc(&self) -> usize {
        self.code.len()
    }
}

/// The code lines of `counted`, in order.
fn all_code(counted: &[Counted]) -> Vec<String> {
    counted.iter().flat_map(|c| c.code.iter().cloned()).collect()
}

/// Counts `version`'s code lines in `source` (the text of its file), item by item.
///
/// # Errors
/// `InvalidData` naming the file and the item when a name of the selection matches no item.
pub fn count(version: &Version, source: &str) -> io::Result<Vec<Counted>> {
    let lines: Vec<&str> = source.lines().collect();
    let all = items(source);
    let span = |item: &Item| -> Vec<String> {
        code_lines(lines[item.first - 1..item.last].iter().copied()).into_iter().map(str::to_owned).collect()
    };
    match version.selection {
        Selection::File => {
            let tests: Vec<&Item> = all.iter().filter(|i| i.test_only).collect();
            let outside = lines
                .iter()
                .enumerate()
                .filter(|(n, _)| !tests.iter().any(|t| (t.first..=t.last).contains(&(n + 1))))
                .map(|(_, l)| *l);
            let code = code_lines(outside).into_iter().map(str::to_owned).collect();
            Ok(vec![Counted { item: "*".into(), first: 1, last: lines.len(), code }])
        }
        Selection::Items(names) => {
            let mut counted = Vec::new();
            for name in names {
                let matching: Vec<&Item> = all.iter().filter(|i| !i.test_only && i.name == *name).collect();
                if matching.is_empty() {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "{}: no item named `{name}` (version `{}` of the {}): was it renamed? update \
                             `VERSIONS` in crates/oplog-bench/src/experiments/loc.rs",
                            version.file, version.id, version.structure
                        ),
                    ));
                }
                counted.extend(matching.into_iter().map(|i| Counted {
                    item: i.name.clone(),
                    first: i.first,
                    last: i.last,
                    code: span(i),
                }));
            }
            counted.sort_by_key(|c| c.first);
            Ok(counted)
        }
    }
}

/// The workspace root: the one this binary was built from, else the current directory;
/// the first that holds every file of [`VERSIONS`].
///
/// # Errors
/// `NotFound` naming the places looked.
pub fn workspace_root() -> io::Result<PathBuf> {
    let built_in = Path::new(env!("CARGO_MANIFEST_DIR")).parent().and_then(Path::parent).map(Path::to_path_buf);
    let roots: Vec<PathBuf> = built_in.into_iter().chain(std::env::current_dir().ok()).collect();
    roots.iter().find(|root| VERSIONS.iter().all(|v| root.join(v.file).is_file())).cloned().ok_or_else(|| {
        let looked: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
        io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "the loc experiment counts lines in the workspace's sources, and found them in none of {}: run it \
                 from the workspace root",
                looked.join(", ")
            ),
        )
    })
}

/// Every version's counted items, read from the sources under `root`.
///
/// # Errors
/// A file that cannot be read (naming it), or a name that matches no item ([`count`]).
pub fn count_all(root: &Path) -> io::Result<Vec<(Version, Vec<Counted>)>> {
    VERSIONS
        .iter()
        .chain(std::iter::once(&SHARED))
        .map(|v| {
            let path = root.join(v.file);
            let source = std::fs::read_to_string(&path)
                .map_err(|e| io::Error::new(e.kind(), format!("cannot read {}: {e}", path.display())))?;
            Ok((*v, count(v, &source)?))
        })
        .collect()
}

/// The `figure-13` annex's columns.
pub const FIGURE_COLUMNS: [&str; 13] = [
    "structure",
    "percore",
    "percore_loc",
    "percore_changed",
    "oplog",
    "oplog_loc",
    "oplog_changed",
    "stock",
    "stock_loc",
    "percore_per_oplog",
    "text_percore_loc",
    "text_oplog_loc",
    "text_percore_per_oplog",
];

/// The names a version is selected by (none for a whole file).
fn names(v: &Version) -> &'static [&'static str] {
    match v.selection {
        Selection::Items(names) => names,
        Selection::File => &[],
    }
}

/// One version's figures in the `figure-13` annex.
struct Counts {
    version: Version,
    loc: usize,
    /// Code lines added or modified against the structure's stock version.
    changed: Option<usize>,
}

/// The `figure-13` annex: per structure and per-core version (or one row without, where
/// the tree has none), each role's lines, the lines each changes from the stock version
/// ([`changed_lines`]; 000 Figure 13 counts lines added or modified), the per-core /
/// OpLog ratio of changed lines, and the text's counts.
pub fn figure_annex(counts: &[(Version, Vec<Counted>)]) -> Annex {
    let mut annex = Annex::new(
        "figure-13",
        "lines of code per version (000 Figure 13), counted in this tree's sources: each version's own code lines \
         (_loc) and those it adds or modifies against the stock version (_changed), per-core against OpLog, and \
         the text's counts beside",
        &FIGURE_COLUMNS,
    )
    .hide_in_text("oplog");
    let code = |v: &Version| counts.iter().find(|(c, _)| c == v).map(|(_, items)| all_code(items));
    let of = |s: &Structure, role: Role| -> Vec<Version> {
        VERSIONS.iter().filter(|v| v.structure == s.name && v.role == role).copied().collect()
    };
    let mut missing = Vec::new();
    for s in &STRUCTURES {
        let stock = of(s, Role::Stock).into_iter().next();
        let stock_code = stock.and_then(|v| code(&v));
        let figures = |v: Version| -> Option<Counts> {
            let lines = code(&v)?;
            let changed = match (stock, &stock_code) {
                (Some(base), Some(base_code)) if base != v => {
                    Some(changed_lines(&lines, names(&v), base_code, names(&base)))
                }
                _ => None,
            };
            Some(Counts { version: v, loc: lines.len(), changed })
        };
        let oplog = of(s, Role::OpLog).into_iter().next().and_then(figures);
        let stock = stock.and_then(figures);
        let mut percore: Vec<Option<Counts>> = of(s, Role::PerCore).into_iter().map(figures).collect();
        if percore.is_empty() {
            missing.push(s.name);
            percore.push(None);
        }
        let (text_percore, text_oplog) = s.text.unzip();
        let number = |n: Option<usize>| n.map_or(Value::Null, |n| json!(n));
        for p in &percore {
            let id = |x: Option<&Counts>| x.map_or(Value::Null, |c| json!(c.version.id));
            let loc = |x: Option<&Counts>| number(x.map(|c| c.loc));
            let changed = |x: Option<&Counts>| number(x.and_then(|c| c.changed));
            let ratio = match (p.as_ref().and_then(|c| c.changed), oplog.as_ref().and_then(|c| c.changed)) {
                (Some(p), Some(o)) if o > 0 => json!(round(1, p as f64 / o as f64)),
                _ => Value::Null,
            };
            let text_ratio = s.text.map_or(Value::Null, |(p, o)| json!(round(1, p as f64 / o as f64)));
            annex.row(vec![
                json!(s.name),
                id(p.as_ref()),
                loc(p.as_ref()),
                changed(p.as_ref()),
                id(oplog.as_ref()),
                loc(oplog.as_ref()),
                changed(oplog.as_ref()),
                id(stock.as_ref()),
                loc(stock.as_ref()),
                ratio,
                text_percore.map_or(Value::Null, |n| json!(n)),
                text_oplog.map_or(Value::Null, |n| json!(n)),
                text_ratio,
            ]);
        }
    }
    if !missing.is_empty() {
        annex.note(format!(
            "no hand-made per-core version in this tree for: {} (its baselines are one lock and a lock-free \
             structure); the text's per-core counts are shown",
            missing.join(", ")
        ));
    }
    annex.note(
        "a version's lines: its own items' code lines (no blank or comment lines); _changed: those not in the \
         longest common subsequence with the stock version's, type names aside; percore_per_oplog is the ratio of \
         changed lines. The code all versions share, and the logged-set adapter's absorption (a type-specific \
         optimization, as the text leaves out), are in none: see the items annex",
    );
    annex
}

/// The `items` annex's columns.
pub const ITEM_COLUMNS: [&str; 8] = ["structure", "version", "role", "file", "item", "first_line", "last_line", "loc"];

/// The `items` annex: every item counted, with its file and lines.
pub fn items_annex(counts: &[(Version, Vec<Counted>)]) -> Annex {
    let mut annex = Annex::new(
        "items",
        "every item counted: its version, file, first and last line, code lines (`*`: the whole file outside its \
         tests)",
        &ITEM_COLUMNS,
    );
    for (v, counted) in counts {
        for c in counted {
            annex.row(vec![
                json!(v.structure),
                json!(v.id),
                json!(v.role.name()),
                json!(v.file),
                json!(c.item),
                json!(c.first),
                json!(c.last),
                json!(c.loc()),
            ]);
        }
    }
    annex
}

/// The `loc` experiment.
#[derive(Clone, Copy, Debug, Default)]
pub struct LocExperiment;

impl Experiment for LocExperiment {
    fn name(&self) -> &'static str {
        "loc"
    }

    fn description(&self) -> &'static str {
        "lines of code of the OpLog versions against hand-made per-core and stock versions, counted in the sources \
         (000 §7.4, Figure 13)"
    }

    fn ids(&self) -> Vec<&'static str> {
        Vec::new()
    }

    fn points(&self, _: &Settings) -> u64 {
        0
    }

    fn run(&self, _: &Settings, sink: &mut Sink) -> io::Result<()> {
        let counts = count_all(&workspace_root()?)?;
        sink.annex(figure_annex(&counts))?;
        sink.annex(items_annex(&counts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"//! Module docs.

use std::fmt;

/// A type.
#[derive(Debug)]
pub struct Queue<E: Send + 'static> {
    items: Vec<E>, // trailing comment
}

/// A tuple struct.
pub struct Enqueue<E>(pub E);

pub type Kind<E> =
    Vec<Enqueue<E>>;

impl<E: Send + 'static> fmt::Debug
    for Queue<E>
where
    E: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        /* a block
           comment */
        f.write_str("{")
    }
}

impl<F: Fn() -> u8> Default for Queue<F> {}

pub(crate) const fn size() -> usize {
    3
}

crate::concurrent!(Model, call, dyn Trait, [[] Queue<u64>]);

#[cfg_attr(
    miri,
    ignore = "slow"
)]
static LIMIT: u64 = 4;

#[cfg(all(test, not(loom)))]
mod tests {
    #[test]
    fn t() {}
}
"#;

    fn names(source: &str) -> Vec<(String, usize, usize, bool)> {
        items(source).into_iter().map(|i| (i.name, i.first, i.last, i.test_only)).collect()
    }

    #[test]
    fn items_are_found_with_their_lines_and_names() {
        let expected: Vec<(String, usize, usize, bool)> = [
            ("", 3, 3, false),
            ("Queue", 6, 9, false),
            ("Enqueue", 12, 12, false),
            ("Kind", 14, 15, false),
            ("Queue", 17, 27, false),
            ("Queue", 29, 29, false),
            ("size", 31, 33, false),
            ("", 35, 35, false),
            ("LIMIT", 37, 41, false),
            ("tests", 43, 47, true),
        ]
        .into_iter()
        .map(|(n, a, b, t)| (n.to_owned(), a, b, t))
        .collect();
        assert_eq!(names(SAMPLE), expected);
    }

    #[test]
    fn code_lines_skip_blanks_and_every_kind_of_comment() {
        let lines =
            ["", "  // line", "/// doc", "//! inner", "let x = 1; // trailing", "/* a", "still", "*/ y();", "z"];
        // Code after a block comment ends counts.
        assert_eq!(code_lines(lines), ["let x = 1; // trailing", "*/ y();", "z"]);
        assert_eq!(code_lines(["/* one-line */", "  #[inline]"]), ["#[inline]"]);
    }

    #[test]
    fn a_selection_counts_every_impl_of_its_types() {
        let v = Version {
            structure: "sample",
            id: "x",
            role: Role::OpLog,
            file: "sample.rs",
            selection: Selection::Items(&["Queue", "Kind"]),
        };
        let counted = count(&v, SAMPLE).unwrap();
        let spans: Vec<(&str, usize, usize)> = counted.iter().map(|c| (c.item.as_str(), c.first, c.loc())).collect();
        // Queue: derive, header, field, `}`; Kind: 2 lines; the Debug impl: 11 lines less the
        // 2-line block comment; the one-line Default impl.
        assert_eq!(spans, [("Queue", 6, 4), ("Kind", 14, 2), ("Queue", 17, 9), ("Queue", 29, 1)]);
    }

    #[test]
    fn changed_lines_are_those_outside_the_common_subsequence_type_names_aside() {
        let lines = |v: &[&str]| -> Vec<String> { v.iter().map(|l| (*l).to_owned()).collect() };
        let stock =
            lines(&["pub struct MutexSet {", "set: Mutex<Set>,", "}", "impl MutexSet {", "fn add(&self) {", "}", "}"]);
        let oplog = lines(&[
            "pub type Kind = Log;",
            "pub struct OpLogSet {",
            "set: OpLog<Kind>,",
            "}",
            "impl OpLogSet {",
            "fn add(&self) {",
            "}",
            "}",
        ]);
        // The alias and the field are new; the rest matches once the type names are `Self`.
        assert_eq!(changed_lines(&oplog, &["OpLogSet", "Kind"], &stock, &["MutexSet"]), 2);
        assert_eq!(changed_lines(&stock, &["MutexSet"], &stock, &["MutexSet"]), 0);
        // Without the names, every line naming the type differs.
        assert_eq!(changed_lines(&oplog, &[], &stock, &[]), 4);
        // `Kind` inside `OpLog<Kind>` is a whole word too, but `KindOf` is not.
        assert_eq!(normalized("x: OpLog<Kind>, y: KindOf", &["Kind"]), "x: OpLog<Self>, y: KindOf");
    }

    #[test]
    fn a_whole_file_leaves_out_its_tests() {
        let v = Version {
            structure: "sample",
            id: "x",
            role: Role::PerCore,
            file: "sample.rs",
            selection: Selection::File,
        };
        let counted = count(&v, SAMPLE).unwrap();
        let all = code_lines(SAMPLE.lines()).len();
        // The test module's 5 lines (its attribute, `mod`, `#[test]`, `fn`, `}`).
        assert_eq!(counted[0].loc(), all - 5);
    }

    #[test]
    fn a_name_that_matches_nothing_is_an_error_naming_it() {
        let v = Version {
            structure: "sample",
            id: "x",
            role: Role::OpLog,
            file: "sample.rs",
            selection: Selection::Items(&["Renamed"]),
        };
        let err = count(&v, SAMPLE).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().starts_with("sample.rs: no item named `Renamed` (version `x` of the sample)"), "{err}");
    }

    /// Every version in the table resolves in this tree, so a renamed type fails here.
    #[test]
    fn every_version_is_found_in_the_sources() {
        let root = workspace_root().unwrap();
        let counts = count_all(&root).unwrap();
        assert_eq!(counts.len(), VERSIONS.len() + 1);
        for (v, counted) in &counts {
            let loc: usize = counted.iter().map(Counted::loc).sum();
            assert!(loc > 0, "{} {} counted no line", v.structure, v.id);
        }
        let figure = figure_annex(&counts);
        // One row per structure without a per-core version, one per per-core version else.
        assert_eq!(figure.rows.len(), 2 + 1 + 2);
        assert_eq!(figure.rows[0][0], json!("rmap"));
        assert_eq!((figure.rows[0][2].clone(), figure.rows[0][10].clone()), (Value::Null, json!(473)));
        let open_files = &figure.rows[2];
        assert_eq!((open_files[1].clone(), open_files[4].clone()), (json!("percore"), json!("oplog")));
        // Each changes at most its own lines from the stock version.
        for (changed, loc) in [(3, 2), (6, 5)] {
            assert!(open_files[changed].as_u64().unwrap() <= open_files[loc].as_u64().unwrap(), "{open_files:?}");
        }
        let items = items_annex(&counts);
        assert!(items.rows.iter().any(|r| r[1] == json!("logged-set") && r[2] == json!("shared")));
    }
}
