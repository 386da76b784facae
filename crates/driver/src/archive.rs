//! Static libraries: a Unix `ar` archive (GNU format) of object files with
//! the symbol index linkers need (`/`), and long member names in the
//! `//` table. Deterministic: no dates, owners or modes from the machine.

/// One member: its file name and contents, and the symbols it defines.
pub struct Member {
    pub name: String,
    pub data: Vec<u8>,
    pub symbols: Vec<String>,
}

fn header(name: &str, size: usize) -> Vec<u8> {
    let h = format!("{name:<16}{:<12}{:<6}{:<6}{:<8}{size:<10}`\n", 0, 0, 0, 644);
    debug_assert_eq!(h.len(), 60);
    h.into_bytes()
}

fn pad(out: &mut Vec<u8>) {
    if out.len() % 2 == 1 {
        out.push(b'\n');
    }
}

/// The archive holding `members`, in order.
pub fn write_archive(members: &[Member]) -> Vec<u8> {
    // Long names go to the `//` member; a member refers to its name as `/offset`.
    let mut long_names = Vec::new();
    let mut names = vec![];
    for m in members {
        if m.name.len() + 1 > 16 {
            names.push(format!("/{}", long_names.len()));
            long_names.extend_from_slice(m.name.as_bytes());
            long_names.extend_from_slice(b"/\n");
        } else {
            names.push(format!("{}/", m.name));
        }
    }
    let symbols: Vec<(usize, &String)> = members
        .iter()
        .enumerate()
        .flat_map(|(i, m)| m.symbols.iter().map(move |s| (i, s)))
        .collect();
    let symtab_size = 4 + 4 * symbols.len() + symbols.iter().map(|(_, s)| s.len() + 1).sum::<usize>();
    let padded = |n: usize| n + n % 2;
    // Offsets of the member headers: after the magic, the symbol table and
    // the long-name table.
    let mut offset = 8 + 60 + padded(symtab_size);
    if !long_names.is_empty() {
        offset += 60 + padded(long_names.len());
    }
    let mut member_offsets = vec![];
    for m in members {
        member_offsets.push(offset as u32);
        offset += 60 + padded(m.data.len());
    }
    let mut out = b"!<arch>\n".to_vec();
    out.extend(header("/", symtab_size));
    out.extend((symbols.len() as u32).to_be_bytes());
    for (i, _) in &symbols {
        out.extend(member_offsets[*i].to_be_bytes());
    }
    for (_, s) in &symbols {
        out.extend(s.as_bytes());
        out.push(0);
    }
    pad(&mut out);
    if !long_names.is_empty() {
        out.extend(header("//", long_names.len()));
        out.extend(&long_names);
        pad(&mut out);
    }
    for (m, name) in members.iter().zip(&names) {
        out.extend(header(name, m.data.len()));
        out.extend(&m.data);
        pad(&mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_of_a_small_archive() {
        let a = write_archive(&[
            Member { name: "a.o".into(), data: b"abc".to_vec(), symbols: vec!["f".into(), "g".into()] },
            Member { name: "a_rather_long_member_name.o".into(), data: b"xy".to_vec(), symbols: vec![] },
        ]);
        assert!(a.starts_with(b"!<arch>\n/               0 "));
        // Symbol table: 2 symbols, both in the first member.
        let table = &a[68..];
        assert_eq!(&table[..4], &2u32.to_be_bytes());
        let first = u32::from_be_bytes(table[4..8].try_into().unwrap()) as usize;
        assert_eq!(&a[first..first + 4], b"a.o/");
        assert_eq!(&a[first + 60..first + 63], b"abc");
        let text = String::from_utf8_lossy(&a);
        assert!(text.contains("//") && text.contains("a_rather_long_member_name.o/\n"));
        assert!(text.contains("/0 "));
        assert_eq!(a.len() % 2, 0);
    }
}
