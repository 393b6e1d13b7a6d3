//! `ludo verify`'s transparency checks: which key to trust (given, or
//! pinned on first use), and checkpoint consistency (`--consistency`).

use std::path::{Path, PathBuf};

use ludo_record::export::ExportHeader;
use ludo_transparency::{self as transparency, ConsistencyProof, SignedTree};

/// The known-keys file: `--known-keys`, `$LUDO_KNOWN_KEYS`,
/// `$XDG_CONFIG_HOME/ludo/known_log_keys`, or `~/.config/ludo/known_log_keys`.
pub fn known_keys_path(given: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = given {
        return Some(path.to_path_buf());
    }
    if let Some(path) = std::env::var_os("LUDO_KNOWN_KEYS") {
        return Some(PathBuf::from(path));
    }
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    Some(config.join("ludo").join("known_log_keys"))
}

/// A key given on the command line: the verifier key itself, or a file
/// holding it (as `/.well-known/ludotheque-log-key` serves it).
pub fn given_key(text: &str) -> Result<String, String> {
    let key = if transparency::key_id_of(text.trim()).is_some() {
        text.trim().to_string()
    } else {
        std::fs::read_to_string(text)
            .map_err(|e| format!("--key {text}: neither a verifier key nor a readable file ({e})"))?
            .trim()
            .to_string()
    };
    if transparency::key_id_of(&key).is_none() {
        return Err(format!("--key: `{key}` is not a verifier key (origin+keyid+base64)"));
    }
    Ok(key)
}

/// The key pinned for `origin` in the known-keys file (one verifier key per line).
fn pinned(path: &Path, origin: &str) -> Result<Option<String>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(format!("cannot read the known keys {}: {err}", path.display())),
    };
    Ok(text.lines().map(str::trim).find(|line| line.split('+').next() == Some(origin)).map(str::to_string))
}

/// Which key to trust for a bundle whose receipt names `key`: the one
/// given; else the one pinned for its origin; else `key` itself, pinned
/// now (trust on first use). Also says what was decided, for a person.
pub fn trusted_key(given: Option<&str>, known: Option<&Path>, key: &str) -> Result<(String, String), String> {
    if let Some(given) = given {
        return Ok((given.to_string(), format!("key: {} (given)", id(given))));
    }
    let origin = key.split('+').next().unwrap_or_default().to_string();
    let Some(path) = known else {
        return Ok((key.to_string(), format!("key: {} ({origin}; nowhere to pin it: not trusted beyond this bundle)", id(key))));
    };
    match pinned(path, &origin)? {
        Some(pinned) => {
            let note = if pinned == key {
                format!("key: {} ({origin}, pinned in {})", id(key), path.display())
            } else {
                format!("key: {} is pinned for {origin} in {}; the bundle names {}", id(&pinned), path.display(), id(key))
            };
            Ok((pinned, note))
        }
        None => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            }
            let mut text = std::fs::read_to_string(path).unwrap_or_default();
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(key);
            text.push('\n');
            std::fs::write(path, text).map_err(|e| format!("cannot pin the key in {}: {e}", path.display()))?;
            Ok((key.to_string(), format!("key: {} ({origin}) trusted on first use, pinned in {}", id(key), path.display())))
        }
    }
}

fn id(key: &str) -> String {
    transparency::key_id_of(key).unwrap_or_else(|| "?".into())
}

/// A checkpoint from a file: a signed note (as `/v1/log/checkpoint`
/// serves it), or a bundle (its receipt's checkpoint, and the key it names).
fn checkpoint_in(path: &Path) -> Result<(String, Option<String>), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if text.starts_with('{') {
        let header =
            ExportHeader::read(text.as_bytes()).map_err(|e| format!("{}: neither a checkpoint nor an export: {e}", path.display()))?;
        let receipt = header.receipt.ok_or_else(|| format!("{}: an export without a receipt holds no checkpoint", path.display()))?;
        return Ok((receipt.checkpoint, Some(receipt.key)));
    }
    Ok((text, None))
}

/// Where the consistency proof comes from.
pub enum ProofSource<'a> {
    /// A file holding `/v1/log/consistency`'s JSON.
    File(&'a Path),
    /// A server to ask.
    Server(&'a str),
    /// None given.
    None,
}

/// `ludo verify --consistency OLD NEW`: both checkpoints open with the
/// trusted key, and the newer tree extends the older. Answers the report.
pub fn consistency(old: &Path, new: &Path, given: Option<&str>, known: Option<&Path>, proof: &ProofSource<'_>) -> Result<String, String> {
    let (old_text, old_key) = checkpoint_in(old)?;
    let (new_text, new_key) = checkpoint_in(new)?;
    let origin = old_text.lines().next().unwrap_or_default().to_string();
    let (key, how) = match (given, old_key.or(new_key)) {
        (Some(given), _) => (given.to_string(), format!("key: {} (given)", id(given))),
        (None, Some(named)) => trusted_key(None, known, &named)?,
        (None, None) => match known.map(|path| pinned(path, &origin)).transpose()?.flatten() {
            Some(pinned) => (pinned.clone(), format!("key: {} (pinned for {origin})", id(&pinned))),
            None => return Err(format!("no key is known for `{origin}`: give it with --key")),
        },
    };
    let open = |text: &str, which: &str| transparency::open_checkpoint(text, &key).map_err(|e| format!("the {which} checkpoint: {e}"));
    let old_tree: SignedTree = open(&old_text, "old")?;
    let new_tree: SignedTree = open(&new_text, "new")?;
    let proof = match proof {
        ProofSource::File(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            serde_json::from_str(&text).map_err(|e| format!("{}: not a consistency proof: {e}", path.display()))?
        }
        ProofSource::Server(url) => fetch_proof(url, old_tree.size, new_tree.size)?,
        ProofSource::None if old_tree.size == new_tree.size || old_tree.size == 0 => {
            ConsistencyProof { from: old_tree.size, to: new_tree.size, proof: Vec::new() }
        }
        ProofSource::None => return Err("checkpoints of different sizes need a consistency proof: --proof FILE or --server URL".into()),
    };
    transparency::check_consistency(&old_tree, &new_tree, &proof)?;
    Ok(format!(
        "{how}\nold checkpoint: tree size {}, root {}\nnew checkpoint: tree size {}, root {}\nconsistent: the new tree extends the old one ({} hashes of proof)\nVALID\n",
        old_tree.size,
        old_tree.root,
        new_tree.size,
        new_tree.root,
        proof.proof.len()
    ))
}

fn fetch_proof(server: &str, from: u64, to: u64) -> Result<ConsistencyProof, String> {
    let url = format!("{}/v1/log/consistency?from={from}&to={to}", server.trim_end_matches('/'));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let client = reqwest::Client::builder().timeout(std::time::Duration::from_secs(10)).build().map_err(|e| e.to_string())?;
        let answer = client.get(&url).send().await.map_err(|e| format!("GET {url}: {e}"))?;
        let status = answer.status();
        let body = answer.text().await.map_err(|e| format!("GET {url}: {e}"))?;
        if !status.is_success() {
            return Err(format!("GET {url}: {status}: {body}"));
        }
        serde_json::from_str(&body).map_err(|e| format!("GET {url}: not a consistency proof: {e}"))
    })
}
