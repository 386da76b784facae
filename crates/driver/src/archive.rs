//! Static libraries: a Unix `ar` archive of object files with the symbol
//! index linkers need. Two flavours: GNU (ELF and COFF targets: a `/`
//! index, long member names in the `//` table) and Darwin (Mach-O targets:
//! Apple's linker reads only a BSD `__.SYMDEF SORTED` index, and wants
//! every member 8-byte aligned). Deterministic: no dates, owners or modes
//! from the machine.

use ferrohalide_core::target::{os, Target};

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

/// The static library of `members` for `target`: the archive flavour its
/// linkers read, with each symbol as the object spells it (Mach-O puts an
/// underscore before C names).
pub fn static_library(members: &[Member], target: &Target) -> Vec<u8> {
    if matches!(target.os, os::OSX | os::IOS) {
        let mangled: Vec<Member> = members
            .iter()
            .map(|m| Member {
                name: m.name.clone(),
                data: m.data.clone(),
                symbols: m.symbols.iter().map(|s| format!("_{s}")).collect(),
            })
            .collect();
        write_darwin_archive(&mangled)
    } else {
        write_archive(&members)
    }
}

/// The GNU archive holding `members`, in order.
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

/// The Darwin (BSD) archive holding `members`, in order. Names are BSD
/// long names (`#1/N`: N name bytes after the header, padded so the data
/// that follows starts 8-byte aligned); the index is `__.SYMDEF SORTED`:
/// (name offset, member header offset) pairs sorted by name, then the
/// names, all little-endian (the byte order of every Mach-O target here).
pub fn write_darwin_archive(members: &[Member]) -> Vec<u8> {
    // Bytes of a member's name field: the name, NUL padded so that the 60
    // byte header plus it is a multiple of 8.
    let name_field = |name: &str| {
        let mut n = name.len() + 1;
        while (60 + n) % 8 != 0 {
            n += 1;
        }
        n
    };
    let round8 = |n: usize| n.div_ceil(8) * 8;
    let mut symbols: Vec<(usize, &String)> = members
        .iter()
        .enumerate()
        .flat_map(|(i, m)| m.symbols.iter().map(move |s| (i, s)))
        .collect();
    symbols.sort_by(|a, b| a.1.cmp(b.1));
    let mut strtab = vec![];
    let mut strx = vec![];
    for (_, s) in &symbols {
        strx.push(strtab.len() as u32);
        strtab.extend(s.as_bytes());
        strtab.push(0);
    }
    const SYMDEF: &str = "__.SYMDEF SORTED";
    let symdef_name = name_field(SYMDEF);
    let unpadded = 4 + 8 * symbols.len() + 4 + strtab.len();
    strtab.resize(strtab.len() + round8(unpadded) - unpadded, 0);
    let symdef_size = symdef_name + 4 + 8 * symbols.len() + 4 + strtab.len();

    let mut member_offsets = vec![];
    let mut offset = 8 + 60 + symdef_size;
    for m in members {
        member_offsets.push(offset as u32);
        offset += 60 + name_field(&m.name) + round8(m.data.len());
    }
    let mut out = b"!<arch>\n".to_vec();
    let bsd_header = |out: &mut Vec<u8>, name: &str, size: usize| {
        let field = name_field(name);
        out.extend(header(&format!("#1/{field}"), size));
        out.extend(name.as_bytes());
        out.resize(out.len() + field - name.len(), 0);
    };
    bsd_header(&mut out, SYMDEF, symdef_size);
    out.extend(((8 * symbols.len()) as u32).to_le_bytes());
    for ((i, _), x) in symbols.iter().zip(&strx) {
        out.extend(x.to_le_bytes());
        out.extend(member_offsets[*i].to_le_bytes());
    }
    out.extend((strtab.len() as u32).to_le_bytes());
    out.extend(&strtab);
    for m in members {
        debug_assert_eq!(out.len() % 8, 0);
        bsd_header(&mut out, &m.name, name_field(&m.name) + round8(m.data.len()));
        out.extend(&m.data);
        out.resize(out.len() + round8(m.data.len()) - m.data.len(), 0);
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

    #[test]
    fn layout_of_a_darwin_archive() {
        let a = write_darwin_archive(&[
            Member { name: "f.o".into(), data: b"abcde".to_vec(), symbols: vec!["_g".into(), "_f".into()] },
            Member { name: "second.o".into(), data: b"xy".to_vec(), symbols: vec!["_h".into()] },
        ]);
        assert!(a.starts_with(b"!<arch>\n#1/20 "));
        assert_eq!(&a[68..84], b"__.SYMDEF SORTED");
        let u32_at = |o: usize| u32::from_le_bytes(a[o..o + 4].try_into().unwrap()) as usize;
        let body = 88;
        assert_eq!(u32_at(body), 24); // three (strx, offset) pairs
        let strtab = body + 4 + 24 + 4;
        let name = |strx: usize| {
            let s = &a[strtab + strx..];
            String::from_utf8_lossy(&s[..s.iter().position(|&c| c == 0).unwrap()]).into_owned()
        };
        // Sorted by name; each points at its member's header.
        let entries: Vec<(String, usize)> =
            (0..3).map(|i| (name(u32_at(body + 4 + 8 * i)), u32_at(body + 8 + 8 * i))).collect();
        assert_eq!(entries.iter().map(|e| e.0.as_str()).collect::<Vec<_>>(), ["_f", "_g", "_h"]);
        assert_eq!(entries[0].1, entries[1].1);
        for (_, off) in &entries {
            assert_eq!(off % 8, 0);
            assert_eq!(&a[*off..*off + 3], b"#1/");
        }
        let first = entries[0].1;
        assert_eq!(&a[first + 60..first + 63], b"f.o");
        assert_eq!(&a[first + 64..first + 69], b"abcde");
        assert_eq!(&a[entries[2].1 + 60..entries[2].1 + 68], b"second.o");
        assert_eq!(a.len() % 8, 0);
    }
}
