//! HTML form of the IR for `compile_to_lowered_stmt(..., StmtOutputFormat.HTML)`:
//! one self-contained page (inline CSS, no script) showing the same text as
//! the plain printer, syntax-highlighted, with every block statement (loop,
//! produce/consume, realize, if) foldable.
//!
//! Assumes the walk of `printer.rs`; this file only renders its tokens and
//! block structure. Guarantees well-formed HTML: all text is escaped, and a
//! block is `<details open><summary>header</summary><div>body</div>}</details>`,
//! so folding needs nothing but the browser.

use std::fmt;

use super::printer::{IrPrinter, IrSink, Token};
use super::stmt::Stmt;

struct HtmlSink<'a> {
    out: &'a mut String,
    /// Between `open_block` and `begin_body`: the header line is being
    /// written inside `<summary>`, where only inline elements may appear.
    in_summary: bool,
}

fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
}

fn class_of(kind: Token) -> Option<&'static str> {
    match kind {
        Token::Keyword => Some("kw"),
        Token::Name => Some("nm"),
        Token::Number => Some("num"),
        Token::Str => Some("str"),
        Token::Type => Some("ty"),
        Token::Call => Some("fn"),
        // Punctuation is the bulk of the text; leaving it unstyled keeps pages small.
        Token::Op => None,
    }
}

impl IrSink for HtmlSink<'_> {
    fn token(&mut self, kind: Token, text: &str) -> fmt::Result {
        match class_of(kind) {
            Some(c) => {
                self.out.push_str("<span class=\"");
                self.out.push_str(c);
                self.out.push_str("\">");
                escape_into(self.out, text);
                self.out.push_str("</span>");
            }
            None => escape_into(self.out, text),
        }
        Ok(())
    }
    fn start_line(&mut self, _depth: usize) -> fmt::Result {
        // Indentation comes from the nesting of block bodies (CSS).
        if !self.in_summary {
            self.out.push_str("<div class=\"ln\">");
        }
        Ok(())
    }
    fn end_line(&mut self) -> fmt::Result {
        // Newlines go between elements only: inside the `white-space: pre`
        // lines they would show up as blank lines.
        if !self.in_summary {
            self.out.push_str("</div>\n");
        }
        Ok(())
    }
    fn open_block(&mut self) -> fmt::Result {
        self.out.push_str("<details open><summary>");
        self.in_summary = true;
        Ok(())
    }
    fn begin_body(&mut self) -> fmt::Result {
        self.out.push_str("</summary><div class=\"body\">\n");
        self.in_summary = false;
        Ok(())
    }
    fn end_body(&mut self) -> fmt::Result {
        self.out.push_str("</div>");
        Ok(())
    }
    fn close_block(&mut self) -> fmt::Result {
        self.out.push_str("</details>\n");
        Ok(())
    }
}

const STYLE: &str = "\
body { font-family: sans-serif; margin: 1em; }
.stmt { font-family: monospace; line-height: 1.35; }
.ln, summary { white-space: pre; }
.body { margin-left: 2ch; }
summary { list-style: none; cursor: pointer; }
summary::-webkit-details-marker { display: none; }
summary::before { content: \"\\25BE  \"; color: #888; margin-left: -2ch; }
details:not([open]) > summary::before { content: \"\\25B8  \"; }
details:not([open]) > summary::after { content: \" \\2026 }\"; color: #888; }
.stmt > details, .stmt > .ln { margin-left: 2ch; }
.kw { color: #8b008b; font-weight: bold; }
.nm { color: #00008b; }
.num { color: #b22222; }
.str { color: #006400; }
.ty { color: #008080; }
.fn { color: #a0522d; }
";

/// A whole lowered function as a self-contained HTML page.
pub fn function_to_html(name: &str, args: &[String], body: &Stmt) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>");
    escape_into(&mut out, name);
    out.push_str("</title>\n<style>\n");
    out.push_str(STYLE);
    out.push_str("</style>\n</head>\n<body>\n<div class=\"stmt\">\n");
    let mut sink = HtmlSink {
        out: &mut out,
        in_summary: false,
    };
    // Writing to a String cannot fail.
    let _ = IrPrinter::new(&mut sink).function(name, args, body);
    out.push_str("</div>\n</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Expr, ForType};

    fn sample() -> Stmt {
        let x = Expr::var_i32("x");
        let store = Stmt::provide(
            "f".to_string(),
            vec![Expr::lt(x.clone(), Expr::i32(3))],
            vec![x.clone()],
            Expr::bool_const(true),
        );
        let body = Stmt::if_then_else(
            Expr::lt(x, Expr::i32(3)),
            store.clone(),
            Some(store),
        );
        Stmt::producer(
            "f",
            Stmt::for_loop("x".to_string(), Expr::i32(0), Expr::i32(8), ForType::Parallel, body),
        )
    }

    /// The page's text with every tag removed and entities decoded.
    fn visible_text(html: &str) -> String {
        let body = &html[html.find("<div class=\"stmt\">").unwrap()..];
        let mut out = String::new();
        let mut in_tag = false;
        for c in body.chars() {
            match c {
                '<' => in_tag = true,
                '>' if in_tag => in_tag = false,
                c if !in_tag => out.push(c),
                _ => {}
            }
        }
        out.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&amp;", "&")
    }

    #[test]
    fn shows_the_same_statement_as_the_text_form() {
        let s = sample();
        let args = vec!["f".to_string()];
        let html = function_to_html("f", &args, &s);
        let text = super::super::printer::function_to_text("f", &args, &s);
        let strip = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(strip(&visible_text(&html)), strip(&text));
    }

    #[test]
    fn blocks_fold_and_tags_balance() {
        let html = function_to_html("f", &["f".to_string()], &sample());
        // func, parallel, produce, if, else
        assert_eq!(html.matches("<details open>").count(), 5);
        for tag in ["details", "summary", "div", "span"] {
            assert_eq!(
                html.matches(&format!("<{tag}")).count(),
                html.matches(&format!("</{tag}>")).count(),
                "unbalanced <{tag}>"
            );
        }
        assert!(html.contains(" &lt; <span class=\"num\">3</span>"));
        assert!(html.contains("<span class=\"kw\">parallel</span>"));
        assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    }
}
