//! The tokens of a gpib.conf, with the line and column each starts at.
//!
//! linux-gpib's lexer (`lib/ibConfLex.l`) knows C comments `/* ... */` (not nested, no
//! `//` or `#`; one still open at the end of the file runs to the end, as flex's
//! comment state does), double-quoted strings without escapes (they may span lines and
//! may be empty), the
//! punctuation `{ } = ,`, and words of letters, digits, `_` and `-`. Every keyword,
//! number, boolean and timeout name is such a word, matched whole (flex takes the
//! longest match: `pad` is a keyword, `padding` a bare string, `12ab` not a number),
//! so this lexer returns words raw and the parser says what each one is.

use super::error::{ParseError, Problem};

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tok<'a> {
    /// A word: letters, digits, `_` and `-`.
    Word(&'a str),
    /// A double-quoted string, without its quotes.
    Str(&'a str),
    /// `{`
    Open,
    /// `}`
    Close,
    /// `=`
    Equals,
    /// `,`
    Comma,
    /// The end of the text.
    End,
}

impl Tok<'_> {
    /// How the token reads in a message.
    pub(super) fn describe(&self) -> String {
        match self {
            Tok::Word(w) => format!("`{w}`"),
            Tok::Str(s) => format!("the string \"{s}\""),
            Tok::Open => "`{`".into(),
            Tok::Close => "`}`".into(),
            Tok::Equals => "`=`".into(),
            Tok::Comma => "`,`".into(),
            Tok::End => "the end of the file".into(),
        }
    }
}

/// A token and where it starts (1-based line and column, columns counted in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Token<'a> {
    pub tok: Tok<'a>,
    pub line: u32,
    pub column: u32,
}

/// Splits gpib.conf text into tokens, one at a time.
pub(super) struct Lexer<'a> {
    text: &'a str,
    /// Byte offset of the next character.
    at: usize,
    line: u32,
    column: u32,
    /// Where a comment still open at the end of the text starts.
    open_comment: Option<(u32, u32)>,
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

impl<'a> Lexer<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Self {
            text,
            at: 0,
            line: 1,
            column: 1,
            open_comment: None,
        }
    }

    /// Where the comment that runs to the end of the text starts, once the lexer
    /// has reached it.
    pub(super) fn open_comment(&self) -> Option<(u32, u32)> {
        self.open_comment
    }

    fn peek_char(&self) -> Option<char> {
        self.text[self.at..].chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek_char()?;
        self.at += c.len_utf8();
        if c == '\n' {
            // A file is capped at 1 MiB, so its line count fits; saturate regardless.
            self.line = self.line.saturating_add(1);
            self.column = 1;
        } else {
            self.column = self.column.saturating_add(1);
        }
        Some(c)
    }

    fn error(&self, line: u32, column: u32, problem: Problem) -> ParseError {
        ParseError::new(line, column, None, problem)
    }

    /// The next token; [`Tok::End`] at the end (and on every call after it).
    pub(super) fn next_token(&mut self) -> Result<Token<'a>, ParseError> {
        loop {
            let (line, column) = (self.line, self.column);
            let Some(c) = self.peek_char() else {
                return Ok(Token {
                    tok: Tok::End,
                    line,
                    column,
                });
            };
            let token = |tok| Token { tok, line, column };
            match c {
                ' ' | '\t' | '\n' | '\r' => {
                    self.bump();
                }
                '/' if self.text[self.at..].starts_with("/*") => {
                    self.bump();
                    self.bump();
                    match self.text[self.at..].find("*/") {
                        Some(n) => {
                            let end = self.at + n + 2;
                            while self.at < end {
                                self.bump();
                            }
                        }
                        None => {
                            // linux-gpib's lexer stays in its comment state to the end.
                            self.open_comment = Some((line, column));
                            self.at = self.text.len();
                        }
                    }
                }
                '"' => {
                    self.bump();
                    let start = self.at;
                    let Some(n) = self.text[start..].find('"') else {
                        return Err(self.error(line, column, Problem::UnterminatedString));
                    };
                    let end = start + n;
                    while self.at < end {
                        self.bump();
                    }
                    self.bump(); // the closing quote
                    return Ok(token(Tok::Str(&self.text[start..end])));
                }
                '{' | '}' | '=' | ',' => {
                    self.bump();
                    return Ok(token(match c {
                        '{' => Tok::Open,
                        '}' => Tok::Close,
                        '=' => Tok::Equals,
                        _ => Tok::Comma,
                    }));
                }
                c if is_word_char(c) => {
                    let start = self.at;
                    while self.peek_char().is_some_and(is_word_char) {
                        self.bump();
                    }
                    return Ok(token(Tok::Word(&self.text[start..self.at])));
                }
                other => return Err(self.error(line, column, Problem::UnexpectedCharacter(other))),
            }
        }
    }
}
