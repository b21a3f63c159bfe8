//! The command lines a page prints for its reader to run again: `election-bench run|trace` for
//! one trial ([`Replay`]) and the command that reproduces a sweep. Every word goes through
//! [`shell_quote`], so a copied command runs as printed whatever a name or a value holds.

use std::fmt;

/// `s` as one word of a POSIX shell: as it is when it holds only characters no shell treats
/// specially, else in single quotes.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.,/=+:@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// A recorded command line (a manifest's `command`, quoted by [`shell_quote`]) split into its
/// words as a POSIX shell would; `None` when its quoting is unbalanced.
pub fn split_command(command: &str) -> Option<Vec<String>> {
    shlex::split(command)
}

/// The `--config FILE` of a recorded command line (a sweep's manifest `command`), if it has
/// one: a replay of one of its trials needs the same file for its custom networks, scenarios
/// and measured distributions.
pub fn config_file(command: &str) -> Option<String> {
    let words = shlex::split(command)?;
    let mut it = words.iter();
    while let Some(w) = it.next() {
        if w == "--config" {
            return it.next().cloned();
        }
        if let Some(v) = w.strip_prefix("--config=") {
            return Some(v.to_string());
        }
    }
    None
}

/// The parameter keys a recorded command line sets with `--set KEY=...` (or `--set=KEY=...`):
/// with a `--config`, the sweep's other parameters come from the file, and a replay that names
/// the file takes them from it.
pub fn set_keys(command: &str) -> Vec<String> {
    let Some(words) = shlex::split(command) else {
        return Vec::new();
    };
    let mut keys = Vec::new();
    let mut it = words.iter();
    while let Some(w) = it.next() {
        let pair = match w.strip_prefix("--set=") {
            Some(p) => Some(p),
            None if w == "--set" => it.next().map(String::as_str),
            None => None,
        };
        if let Some((k, _)) = pair.and_then(|p| p.split_once('=')) {
            keys.push(k.to_string());
        }
    }
    keys
}

/// The flag names a replay uses: `--protocol --nodes --scenario` (prose) or `-p -n -s`
/// (tables and lists).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flags {
    /// `--protocol`, `--nodes`, `--scenario`.
    Long,
    /// `-p`, `-n`, `-s`.
    Short,
}

/// `election-bench run|trace` for one trial: its protocol, size and scenario, then the network,
/// seed, `--set`s and any other flags in the order they are added. Displayed shell-quoted.
#[derive(Clone, Debug)]
pub struct Replay {
    words: Vec<String>,
}

impl Replay {
    /// `election-bench <command>` (`run` or `trace`) with the trial's protocol, size and
    /// scenario.
    pub fn new(
        command: &str,
        flags: Flags,
        protocol: &str,
        nodes: impl fmt::Display,
        scenario: &str,
    ) -> Replay {
        let (p, n, s) = match flags {
            Flags::Long => ("--protocol", "--nodes", "--scenario"),
            Flags::Short => ("-p", "-n", "-s"),
        };
        let words = ["election-bench", command, p, protocol, n]
            .iter()
            .map(|w| w.to_string())
            .chain([nodes.to_string(), s.to_string(), scenario.to_string()])
            .collect();
        Replay { words }
    }

    /// `--flag value`.
    pub fn arg(mut self, flag: &str, value: impl fmt::Display) -> Replay {
        self.words.push(flag.to_string());
        self.words.push(value.to_string());
        self
    }

    /// `--set key=value` for each pair, in order.
    pub fn sets<K: fmt::Display, V: fmt::Display>(
        mut self,
        sets: impl IntoIterator<Item = (K, V)>,
    ) -> Replay {
        for (k, v) in sets {
            self.words.push("--set".to_string());
            self.words.push(format!("{k}={v}"));
        }
        self
    }
}

impl fmt::Display for Replay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quoted: Vec<String> = self.words.iter().map(|w| shell_quote(w)).collect();
        f.write_str(&quoted.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_is_its_words_shell_quoted() {
        let r = Replay::new("run", Flags::Short, "raft+pre_vote", 5, "leader-crash")
            .arg("--net", "lan")
            .arg("--seed", 3)
            .sets([("net.loss", "0.05"), ("x", "a b")]);
        assert_eq!(
            r.to_string(),
            "election-bench run -p raft+pre_vote -n 5 -s leader-crash --net lan --seed 3 \
             --set net.loss=0.05 --set 'x=a b'"
        );
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn the_config_file_of_a_quoted_command() {
        let words = [
            "election-bench",
            "sweep",
            "--config",
            "my dir/it's.toml",
            "",
            "a=b",
        ];
        let line: Vec<String> = words.iter().map(|w| shell_quote(w)).collect();
        assert_eq!(shlex::split(&line.join(" ")).unwrap(), words);
        assert_eq!(
            config_file(&line.join(" ")).as_deref(),
            Some("my dir/it's.toml")
        );
        assert_eq!(
            config_file("election-bench sweep --config=x.toml").as_deref(),
            Some("x.toml")
        );
        assert_eq!(config_file("election-bench sweep --name gray"), None);
        assert_eq!(
            set_keys("election-bench sweep --config x.toml --set a=1 --set=b.c=2,3 --seeds 2"),
            ["a", "b.c"]
        );
    }
}
