//! Published test vectors, checked through the code that writes and checks
//! our checkpoints: so another implementation that passes the same vectors
//! verifies what this server signs.
//!
//! - RFC 6962 Merkle hashing (leaf and node hashes, roots, inclusion and
//!   consistency proofs) against the reference vectors of
//!   transparency-dev/merkle, the ones certificate-transparency's
//!   implementations share.
//! - C2SP signed-note against the tests of Go's `golang.org/x/mod/sumdb/note`.
//! - C2SP tlog-checkpoint against the spec's example, Go's `sumdb/tlog`
//!   tests and a checkpoint `sum.golang.org` signed.
//!
//! Every expected value below is copied from the source named above it;
//! none is computed here.

use std::collections::HashMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use ludo_transparency::{self as transparency, AtHand, ConsistencyProof, LogKey, Missing, SignedTree};
use signed_note::{Note, StandardSigner, StandardVerifier, VerifierList};
use tlog_tiles::{Checkpoint, Hash};

// ---------------------------------------------------------------------------
// RFC 6962
// ---------------------------------------------------------------------------

/// The eight leaf inputs (hex). Source: transparency-dev/merkle,
/// `testonly/constants.go` (`LeafInputs`), commit 582a6ad190b6848f1d26f8bf08ddef29955d9db1;
/// the same list is `leaves` in `proof/verify_test.go`.
const LEAF_INPUTS: [&str; 8] = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"];

/// The hash of the empty tree. Source: transparency-dev/merkle,
/// `testonly/constants.go` (`EmptyRootHash`), commit 582a6ad1.
const EMPTY_ROOT: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// The root of the tree of the first `n` leaves, for `n` = 1..=8. Source:
/// transparency-dev/merkle, `testonly/constants.go` (`RootHashes`), commit
/// 582a6ad1; also `roots` in `proof/verify_test.go`, commit 02194e9afb6c1d95b5381350007963aa70fff472.
const ROOTS: [&str; 8] = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
];

/// The hash of every complete subtree of the tree of eight leaves, by level
/// (0: the leaf hashes) and index within the level. Source:
/// transparency-dev/merkle, `testonly/constants.go` (`NodeHashes`), commit 582a6ad1.
const NODE_HASHES: [&[&str]; 4] = [
    &[
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
        "0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7",
        "07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7",
        "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        "4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658",
        "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
        "46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1",
    ],
    &[
        "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
        "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
    ],
    &[
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
    ],
    &["5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"],
];

/// Inclusion proofs: (leaf number **from 1**, tree size, proof). Source:
/// transparency-dev/merkle, `proof/verify_test.go` (`inclusionProofs`),
/// commit 02194e9afb6c1d95b5381350007963aa70fff472 (its `{0, 0, nil}` entry
/// is the invalid one its own test skips).
const INCLUSION: [(u64, u64, &[&str]); 5] = [
    (1, 1, &[]),
    (
        1,
        8,
        &[
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        6,
        8,
        &[
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (3, 3, &["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]),
    (
        2,
        5,
        &[
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
];

/// Consistency proofs: (older size, newer size, proof). Source:
/// transparency-dev/merkle, `proof/verify_test.go` (`consistencyProofs`),
/// commit 02194e9afb6c1d95b5381350007963aa70fff472. (The proof of 1 to 8 is
/// also `testdata/consistency/1/happy-path.json` there, in base64.)
const CONSISTENCY: [(u64, u64, &[&str]); 5] = [
    (1, 1, &[]),
    (
        1,
        8,
        &[
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        6,
        8,
        &[
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (
        2,
        5,
        &[
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
    (
        6,
        7,
        &[
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
];

/// A hash that is no node of the tree. Source: transparency-dev/merkle,
/// `proof/verify_test.go` (`sha256SomeHash`), commit 02194e9a.
const SOME_HASH: &str = "abacaba000000000000000000000000000000000000000000060061e00123456";

/// The origin our checks are run under (any valid one: RFC 6962 has none).
const ORIGIN: &str = "example.com/rfc6962-vectors";

fn hash(hex_text: &str) -> Hash {
    Hash(hex::decode(hex_text).unwrap().try_into().expect("32 bytes"))
}

fn b64(hex_text: &str) -> String {
    transparency::encode_hash(&hash(hex_text))
}

/// Leaf `i`'s input as the text `check_inclusion` takes (every input is ASCII).
fn leaf(i: usize) -> String {
    String::from_utf8(hex::decode(LEAF_INPUTS[i]).unwrap()).expect("the vectors' leaves are ASCII")
}

fn tree(size: u64) -> SignedTree {
    SignedTree { origin: ORIGIN.into(), size, root: b64(ROOTS[size as usize - 1]) }
}

/// The stored hashes of the tree of the eight leaves, as the log stores
/// them: each leaf's `tlog_tiles::stored_hashes`, read back through our
/// [`AtHand`] reader.
fn stored() -> HashMap<u64, Hash> {
    let mut stored = HashMap::new();
    for n in 0..LEAF_INPUTS.len() as u64 {
        let data = hex::decode(LEAF_INPUTS[n as usize]).unwrap();
        let hashes = with_reader(&stored, |r| tlog_tiles::stored_hashes(n, &data, r)).expect("earlier hashes at hand");
        let first = transparency::stored_hash_index(0, n);
        for (j, h) in hashes.into_iter().enumerate() {
            stored.insert(first + j as u64, h);
        }
    }
    stored
}

fn with_reader<T>(
    stored: &HashMap<u64, Hash>,
    work: impl FnOnce(&AtHand<'_>) -> Result<T, tlog_tiles::Error>,
) -> Result<T, tlog_tiles::Error> {
    let missing = Missing::default();
    let outcome = work(&AtHand { layers: &[stored], missing: &missing });
    assert_eq!(missing.take(), Vec::<u64>::new(), "a tree computation asked for a hash not stored");
    outcome
}

#[test]
fn leaf_hashes_match_rfc_6962() {
    for (i, expected) in NODE_HASHES[0].iter().enumerate() {
        let data = hex::decode(LEAF_INPUTS[i]).unwrap();
        assert_eq!(transparency::record_hash(&data), hash(expected), "leaf {i}");
        assert_eq!(transparency::record_hash(leaf(i).as_bytes()), hash(expected), "leaf {i} as text");
    }
}

#[test]
fn every_stored_subtree_hash_matches_rfc_6962() {
    let stored = stored();
    assert_eq!(stored.len() as u64, transparency::stored_hash_count(8));
    for (level, hashes) in NODE_HASHES.iter().enumerate() {
        for (k, expected) in hashes.iter().enumerate() {
            let index = transparency::stored_hash_index(level as u8, k as u64);
            assert_eq!(stored[&index], hash(expected), "level {level}, node {k}");
        }
    }
}

#[test]
fn the_roots_of_every_size_match_rfc_6962() {
    let stored = stored();
    assert_eq!(tlog_tiles::EMPTY_HASH, hash(EMPTY_ROOT));
    assert_eq!(with_reader(&stored, |r| tlog_tiles::tree_hash(0, r)).unwrap(), hash(EMPTY_ROOT));
    for size in 1..=8u64 {
        let root = with_reader(&stored, |r| tlog_tiles::tree_hash(size, r)).unwrap();
        assert_eq!(root, hash(ROOTS[size as usize - 1]), "size {size}");
    }
}

#[test]
fn inclusion_proofs_are_the_published_ones_and_check_out() {
    let stored = stored();
    for (number, size, published) in INCLUSION {
        let index = number - 1;
        let proof = with_reader(&stored, |r| tlog_tiles::prove_record(size, index, r)).unwrap();
        assert_eq!(proof, published.iter().map(|h| hash(h)).collect::<Vec<_>>(), "leaf {index} in {size}");
        let proof: Vec<String> = published.iter().map(|h| b64(h)).collect();
        transparency::check_inclusion(&leaf(index as usize), index, &proof, &tree(size))
            .unwrap_or_else(|e| panic!("leaf {index} in {size}: {e}"));
    }
}

#[test]
fn an_altered_inclusion_proof_fails() {
    // The alterations of `corruptInclusionProof` in transparency-dev/merkle
    // `proof/verify_test.go`, each of which must be refused.
    for (number, size, published) in INCLUSION {
        let index = number - 1;
        let proof: Vec<String> = published.iter().map(|h| b64(h)).collect();
        let data = leaf(index as usize);
        let refused = |what: &str, leaf: &str, index: u64, proof: &[String], tree: &SignedTree| {
            assert!(transparency::check_inclusion(leaf, index, proof, tree).is_err(), "leaf {number} of {size}: {what} accepted");
        };
        refused("index - 1", &data, index.wrapping_sub(1), &proof, &tree(size));
        refused("index + 1", &data, index + 1, &proof, &tree(size));
        refused("index ^ 2", &data, index ^ 2, &proof, &tree(size));
        refused("size * 2", &data, index, &proof, &SignedTree { size: size * 2, ..tree(size) });
        refused("size / 2", &data, index, &proof, &SignedTree { size: size / 2, ..tree(size) });
        refused("wrong leaf", "WrongLeaf", index, &proof, &tree(size));
        refused("empty root", &data, index, &proof, &SignedTree { root: b64(EMPTY_ROOT), ..tree(size) });
        refused("random root", &data, index, &proof, &SignedTree { root: b64(SOME_HASH), ..tree(size) });
        refused("trailing root", &data, index, &[proof.clone(), vec![tree(size).root]].concat(), &tree(size));
        refused("preceding root", &data, index, &[vec![tree(size).root], proof.clone()].concat(), &tree(size));
        for i in 0..proof.len() {
            let mut bytes = hex::decode(published[i]).unwrap();
            bytes[0] ^= 8;
            let mut altered = proof.clone();
            altered[i] = BASE64.encode(&bytes);
            refused(&format!("proof[{i}] with a bit flipped"), &data, index, &altered, &tree(size));
        }
        if !proof.is_empty() {
            refused("a hash removed", &data, index, &proof[..proof.len() - 1], &tree(size));
        }
        if proof.len() > 1 {
            let inserted = [vec![proof[0].clone(), b64(SOME_HASH)], proof[1..].to_vec()].concat();
            refused("a hash inserted", &data, index, &inserted, &tree(size));
        }
    }
}

#[test]
fn consistency_proofs_are_the_published_ones_and_check_out() {
    let stored = stored();
    for (from, to, published) in CONSISTENCY {
        if from < to {
            let proof = with_reader(&stored, |r| tlog_tiles::prove_tree(to, from, r)).unwrap();
            assert_eq!(proof, published.iter().map(|h| hash(h)).collect::<Vec<_>>(), "{from} to {to}");
        }
        let proof = ConsistencyProof { from, to, proof: published.iter().map(|h| b64(h)).collect() };
        transparency::check_consistency(&tree(from), &tree(to), &proof).unwrap_or_else(|e| panic!("{from} to {to}: {e}"));
    }
}

#[test]
fn an_altered_consistency_proof_fails() {
    // The alterations of `corruptConsistencyProof` in transparency-dev/merkle
    // `proof/verify_test.go` (for the proofs that are not empty), each of
    // which must be refused.
    for (from, to, published) in CONSISTENCY {
        if published.is_empty() {
            continue;
        }
        let proof: Vec<String> = published.iter().map(|h| b64(h)).collect();
        let (old, new) = (tree(from), tree(to));
        let refused = |what: &str, old: &SignedTree, new: &SignedTree, hashes: Vec<String>| {
            // From the empty tree (1 - 1, 2 ^ 2) too: a proof from it must
            // be empty, as the reference verifier wants.
            let proof = ConsistencyProof { from: old.size, to: new.size, proof: hashes };
            assert!(transparency::check_consistency(old, new, &proof).is_err(), "{from} to {to}: {what} accepted");
        };
        refused("from - 1", &SignedTree { size: from - 1, ..old.clone() }, &new, proof.clone());
        refused("from + 1", &SignedTree { size: from + 1, ..old.clone() }, &new, proof.clone());
        refused("from ^ 2", &SignedTree { size: from ^ 2, ..old.clone() }, &new, proof.clone());
        refused("to * 2", &old, &SignedTree { size: to * 2, ..new.clone() }, proof.clone());
        refused("to / 2", &old, &SignedTree { size: to / 2, ..new.clone() }, proof.clone());
        refused("wrong old root", &SignedTree { root: b64(SOME_HASH), ..old.clone() }, &new, proof.clone());
        refused("wrong new root", &old, &SignedTree { root: b64(SOME_HASH), ..new.clone() }, proof.clone());
        refused(
            "roots swapped",
            &SignedTree { root: new.root.clone(), ..old.clone() },
            &SignedTree { root: old.root.clone(), ..new.clone() },
            proof.clone(),
        );
        refused("empty proof", &old, &new, Vec::new());
        refused("trailing old root", &old, &new, [proof.clone(), vec![old.root.clone()]].concat());
        refused("trailing new root", &old, &new, [proof.clone(), vec![new.root.clone()]].concat());
        refused("preceding old root", &old, &new, [vec![old.root.clone()], proof.clone()].concat());
        refused("preceding new root", &old, &new, [vec![new.root.clone()], proof.clone()].concat());
        refused("preceding proof[0]", &old, &new, [vec![proof[0].clone()], proof.clone()].concat());
        refused("truncated", &old, &new, proof[..proof.len() - 1].to_vec());
        for i in 0..proof.len() {
            let mut bytes = hex::decode(published[i]).unwrap();
            bytes[0] ^= 16;
            let mut altered = proof.clone();
            altered[i] = BASE64.encode(&bytes);
            refused(&format!("proof[{i}] with a bit flipped"), &old, &new, altered);
        }
    }
}

#[test]
fn the_edge_cases_of_consistency_are_those_of_the_reference_verifier() {
    // `TestVerifyConsistency` in transparency-dev/merkle `proof/verify_test.go`
    // (commit 02194e9a), with 32-byte hashes for its "don't care" roots.
    let at = |size: u64, root: &str| SignedTree { origin: ORIGIN.into(), size, root: b64(root) };
    let (one, two) = (SOME_HASH, EMPTY_ROOT);
    let check = |old: SignedTree, new: SignedTree, proof: Vec<String>| {
        transparency::check_consistency(&old, &new, &ConsistencyProof { from: old.size, to: new.size, proof })
    };
    // Sizes that are always consistent.
    assert!(check(at(0, one), at(0, one), vec![]).is_ok());
    assert!(check(at(0, one), at(1, two), vec![]).is_ok());
    assert!(check(at(1, two), at(1, two), vec![]).is_ok());
    // Equal sizes, different roots.
    assert!(check(at(0, one), at(0, two), vec![]).is_err());
    assert!(check(at(1, one), at(1, two), vec![]).is_err());
    // Time travel to the past.
    assert!(check(at(1, one), at(0, two), vec![]).is_err());
    assert!(check(at(2, one), at(1, two), vec![]).is_err());
    // An empty proof between different sizes.
    assert!(check(at(1, one), at(2, two), vec![]).is_err());
    // Equal roots but a proof that is not empty.
    assert!(check(at(0, EMPTY_ROOT), at(0, EMPTY_ROOT), vec![b64(EMPTY_ROOT)]).is_err());
    assert!(check(at(1, EMPTY_ROOT), at(1, EMPTY_ROOT), vec![b64(EMPTY_ROOT)]).is_err());
}

// ---------------------------------------------------------------------------
// C2SP signed-note
// ---------------------------------------------------------------------------

/// Source: golang/mod, `sumdb/note/note_test.go` (`TestNewSigner`, `TestSign`),
/// commit 02c991387e35f9e4c0a9b7ce137717055f8d716d.
const PETER_PRIVATE: &str = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
/// Source: the same file (`TestNewVerifier`, `TestOpen`).
const PETER_KEY: &str = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
/// Source: the same file (`TestOpen`).
const ENOCH_KEY: &str = "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop";
/// Source: the same file (`TestSign`, `TestOpen`).
const PETER_TEXT: &str = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
/// Source: the same file (`TestOpen`: `peterSig`, `enochSig`).
const PETER_SIG: &str = "— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";
const ENOCH_SIG: &str = "— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n";

#[test]
fn a_published_private_key_gives_its_published_verifier_key() {
    let key = LogKey::from_private(PETER_PRIVATE).unwrap();
    assert_eq!(key.verifier_key(), PETER_KEY);
    assert_eq!(key.origin(), "PeterNeumann");
    assert_eq!(key.key_id(), "c74f20a3");
    assert_eq!(transparency::key_id_of(PETER_KEY).as_deref(), Some("c74f20a3"));
    // Our own encoding of the same Ed25519 seed is the published text, byte for byte.
    let seed: [u8; 32] = BASE64.decode("AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz").unwrap()[1..].try_into().unwrap();
    let ours = LogKey::from_seed("PeterNeumann", &seed).unwrap();
    assert_eq!(ours.private_key(), PETER_PRIVATE);
    assert_eq!(ours.verifier_key(), PETER_KEY);
}

#[test]
fn signing_the_published_text_gives_the_published_signature() {
    // Ed25519 is deterministic (RFC 8032): the same key over the same text
    // signs the same bytes. The signer is the one our key's text opens.
    let key = LogKey::from_private(PETER_PRIVATE).unwrap();
    let signer = StandardSigner::new(key.private_key()).unwrap();
    let mut note = Note::new(PETER_TEXT.as_bytes(), &[]).unwrap();
    note.add_sigs(&[&signer]).unwrap();
    assert_eq!(String::from_utf8(note.to_bytes()).unwrap(), format!("{PETER_TEXT}\n{PETER_SIG}"));
}

#[test]
fn the_published_note_verifies_with_the_published_key_only() {
    let peter = || VerifierList::new(vec![Box::new(StandardVerifier::new(PETER_KEY).unwrap())]);
    let note = Note::from_bytes(format!("{PETER_TEXT}\n{PETER_SIG}").as_bytes()).unwrap();
    let (verified, unverified) = note.verify(&peter()).unwrap();
    assert_eq!(note.text(), PETER_TEXT.as_bytes());
    assert_eq!((verified.len(), verified[0].name(), verified[0].id()), (1, "PeterNeumann", 0xc74f_20a3));
    assert!(unverified.is_empty());

    // TestOpen: with both signatures and Peter's key, Peter's verifies and
    // Enoch's is left unverified; with both keys both verify.
    let both = Note::from_bytes(format!("{PETER_TEXT}\n{PETER_SIG}{ENOCH_SIG}").as_bytes()).unwrap();
    let (verified, unverified) = both.verify(&peter()).unwrap();
    assert_eq!((verified.len(), unverified.len(), unverified[0].name()), (1, 1, "EnochRoot"));
    let keys =
        VerifierList::new(vec![Box::new(StandardVerifier::new(PETER_KEY).unwrap()), Box::new(StandardVerifier::new(ENOCH_KEY).unwrap())]);
    let (verified, unverified) = both.verify(&keys).unwrap();
    assert_eq!((verified.len(), unverified.len()), (2, 0));

    // TestOpen: "ABCD" inserted into the signature at byte 60 is an invalid signature.
    let mangled = format!("{}ABCD{}", &PETER_SIG[..60], &PETER_SIG[60..]);
    let bad = Note::from_bytes(format!("{PETER_TEXT}\n{mangled}").as_bytes()).unwrap();
    assert!(matches!(bad.verify(&peter()), Err(signed_note::NoteError::InvalidSignature { .. })));
    // An altered text no longer verifies.
    let altered = format!("{}\n{PETER_SIG}", PETER_TEXT.replace("don't", "do"));
    assert!(Note::from_bytes(altered.as_bytes()).unwrap().verify(&peter()).is_err());
}

// ---------------------------------------------------------------------------
// C2SP tlog-checkpoint
// ---------------------------------------------------------------------------

/// The example of the spec. Source: C2SP/C2SP, `tlog-checkpoint.md`, commit
/// 2793893976c835db049c194d8f2c4f946dcb70ba. Its key is not published.
const SPEC_CHECKPOINT: &str = "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n";

/// Source: golang/mod, `sumdb/tlog/note_test.go` (`TestFormatTree`,
/// `TestParseTree`), commit 774e77886cf18ba9e220baec8497d65b0c50373f: the
/// tree of 123456789012 records whose hash is `RecordHash("hello world")`.
const GO_TREE: &str = "go.sum database tree\n123456789012\nTszzRgjTG6xce+z2AG31kAXYKBgQVtCSCE40HmuwBb0=\n";

/// The public key of sum.golang.org. Source: golang/go,
/// `src/cmd/go/internal/modfetch/key.go` (`knownGOSUMDB`), commit
/// c674ce87c2e47699bb51e02885fb80519ecbfb27.
const SUMDB_KEY: &str = "sum.golang.org+033de0ae+Ac4zctda0e5eza+HJyk9SxEdh+s3Ux18htTTAD8OuAn8";

/// A signed tree head served by sum.golang.org, quoted in sigsum/sigsum,
/// `proposals/2026-01-22-tags-releases-non-releases.md` (the tail of a
/// `/lookup` answer).
const SUMDB_CHECKPOINT: &str = "go.sum database tree\n49189689\nftjbAOzaupaIvaPo/G+Dk63nxOZ2s1OPOKIaPtXs7S4=\n\n— sum.golang.org Az3grlKZssqRoMNPpZfKt0TphbbcF+pzXqElURJKRNFKfaUAgqeI5k2AORH0QAhg/ebRwyIqD/OqP4oLtLnNumvOBAM=\n";

#[test]
fn the_spec_example_checkpoint_reads_and_opens_with_no_other_key() {
    let tree = transparency::peek_checkpoint(SPEC_CHECKPOINT).expect("a checkpoint");
    assert_eq!(
        tree,
        SignedTree {
            origin: "example.com/behind-the-sofa".into(),
            size: 20_852_163,
            root: "CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=".into()
        }
    );
    // Signed with a key we do not have: a key of the same name opens nothing.
    let ours = LogKey::from_seed("example.com/behind-the-sofa", &[7; 32]).unwrap();
    let refused = transparency::open_checkpoint(SPEC_CHECKPOINT, ours.verifier_key()).unwrap_err();
    assert!(refused.contains("no signature by this key"), "{refused}");
}

#[test]
fn the_go_tree_note_reads_and_its_hash_is_our_leaf_hash() {
    let checkpoint = Checkpoint::from_bytes(GO_TREE.as_bytes()).unwrap();
    assert_eq!((checkpoint.origin(), checkpoint.size()), ("go.sum database tree", 123_456_789_012));
    assert_eq!(*checkpoint.hash(), transparency::record_hash(b"hello world"));
    assert_eq!(transparency::encode_hash(&transparency::record_hash(b"hello world")), "TszzRgjTG6xce+z2AG31kAXYKBgQVtCSCE40HmuwBb0=");
    assert_eq!(Checkpoint::new("go.sum database tree", 123_456_789_012, *checkpoint.hash(), "").unwrap().to_bytes(), GO_TREE.as_bytes());
}

#[test]
fn a_checkpoint_signed_by_sum_golang_org_verifies_with_its_key() {
    let verifiers = VerifierList::new(vec![Box::new(StandardVerifier::new(SUMDB_KEY).unwrap())]);
    let note = Note::from_bytes(SUMDB_CHECKPOINT.as_bytes()).unwrap();
    let (verified, _) = note.verify(&verifiers).expect("sum.golang.org's signature");
    assert_eq!((verified[0].name(), verified[0].id()), ("sum.golang.org", 0x033d_e0ae));
    let tree = transparency::peek_checkpoint(SUMDB_CHECKPOINT).expect("a checkpoint");
    assert_eq!(
        tree,
        SignedTree { origin: "go.sum database tree".into(), size: 49_189_689, root: "ftjbAOzaupaIvaPo/G+Dk63nxOZ2s1OPOKIaPtXs7S4=".into() }
    );
    // The signature checks out, but the Go checksum database predates the
    // rule that a log's key be named by its origin, which our receipts
    // require: the refusal names that, not the signature.
    let refused = transparency::open_checkpoint(SUMDB_CHECKPOINT, SUMDB_KEY).unwrap_err();
    assert!(refused.contains("origin `go.sum database tree` is not the key's name `sum.golang.org`"), "{refused}");
    // One bit of the root changed: the signature no longer checks out.
    let altered = SUMDB_CHECKPOINT.replacen("ftjb", "ftjc", 1);
    let refused = transparency::open_checkpoint(&altered, SUMDB_KEY).unwrap_err();
    assert!(refused.contains("signature does not check out"), "{refused}");
}

#[test]
fn our_checkpoint_under_a_published_key_opens_with_that_key() {
    // Our checkpoint format, signed with Go's published test key: the
    // signed-note verifier of the `signed_note` crate opens it with the
    // published verifier key, and so do we.
    let key = LogKey::from_private(PETER_PRIVATE).unwrap();
    let root = hash(ROOTS[7]);
    let signed = key.sign_checkpoint(8, root).unwrap();
    assert!(signed.starts_with(&format!("PeterNeumann\n8\n{}\n\n— PeterNeumann x08go", b64(ROOTS[7]))), "{signed}");
    let verifiers = VerifierList::new(vec![Box::new(StandardVerifier::new(PETER_KEY).unwrap())]);
    Note::from_bytes(signed.as_bytes()).unwrap().verify(&verifiers).unwrap();
    assert_eq!(transparency::open_checkpoint(&signed, PETER_KEY).unwrap(), SignedTree { origin: "PeterNeumann".into(), ..tree(8) });
}
