//! `torch.einsum`'s equation: parsing, the order of its dims, and PyTorch's
//! checks, written once for the op's expansion (and so its inference).
//!
//! Every operand is lined up against one list of dims: the output's
//! subscripts first, in the output's order (ellipsis dims where the `...`
//! stands), then the contracted ones (ellipsis dims the output drops, then
//! the other subscripts in ATen's label order, `A`–`Z` before `a`–`z`).
//! Without `->`, the output is the ellipsis dims, then the subscripts that
//! appear once, in that label order, as PyTorch defines it.

use crate::error::{Error, ErrorKind, Result};

/// One dim of the lined-up operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Label {
    /// A subscript letter, by ATen's index (`A`–`Z` are 0–25, `a`–`z` 26–51).
    Letter(u8),
    /// The k-th dim the ellipsis stands for (counted from its left).
    Ellipsis(usize),
}

/// A parsed equation against the operands' shapes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Equation {
    /// The lined-up dims: the output's first, then the contracted ones.
    pub dims: Vec<Label>,
    /// How many leading entries of [`Equation::dims`] the output has.
    pub out_dims: usize,
    /// For each operand, where each of its dims goes in [`Equation::dims`].
    pub positions: Vec<Vec<usize>>,
    /// The size of every lined-up dim (broadcast over the operands).
    pub sizes: Vec<i64>,
    /// For each operand, the diagonals taken first (a subscript repeated
    /// within it, as in `ii->i`), one after another; [`Equation::positions`]
    /// are those of the dims left.
    pub diagonals: Vec<Vec<Diagonal>>,
}

/// The diagonal over the dims where one subscript repeats in an operand:
/// ATen's `diagonal`, here indexing every such dim with `arange(size)`
/// (advanced indexing), so the diagonal's dim stands where the first of
/// them did when they are adjacent, and first otherwise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagonal {
    /// The operand's dims (at this step) the subscript stands at.
    pub dims: Vec<usize>,
    /// Their common size.
    pub size: i64,
}

/// Takes the diagonal of every subscript repeated in operand `k`, one
/// subscript at a time, updating its labels; the diagonals and the shape
/// left.
fn take_diagonals(
    k: usize,
    labels: &mut Vec<Label>,
    shape: &[i64],
) -> Result<(Vec<Diagonal>, Vec<i64>)> {
    let mut shape = shape.to_vec();
    let mut steps = Vec::new();
    while let Some(label) = labels
        .iter()
        .enumerate()
        .find(|(i, l)| labels[..*i].contains(l))
        .map(|(_, l)| *l)
    {
        let dims: Vec<usize> = (0..labels.len()).filter(|&i| labels[i] == label).collect();
        let size = shape[dims[0]];
        for &d in &dims[1..] {
            if shape[d] != size {
                let Label::Letter(l) = label else {
                    unreachable!("an ellipsis dim is never repeated")
                };
                return Err(einsum_err(format!(
                    "subscript {} is repeated for operand {k} but the sizes don't match, {} != {size}",
                    char_of(l),
                    shape[d]
                )));
            }
        }
        let adjacent = dims.windows(2).all(|w| w[1] == w[0] + 1);
        let at = if adjacent { dims[0] } else { 0 };
        let keep = |i: &usize| !dims.contains(i);
        let mut new_labels: Vec<Label> =
            (0..labels.len()).filter(keep).map(|i| labels[i]).collect();
        let mut new_shape: Vec<i64> = (0..shape.len()).filter(keep).map(|i| shape[i]).collect();
        new_labels.insert(at, label);
        new_shape.insert(at, size);
        *labels = new_labels;
        shape = new_shape;
        steps.push(Diagonal { dims, size });
    }
    Ok((steps, shape))
}

fn einsum_err(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Shape, format!("einsum(): {}", message.into()))
}

fn letter(c: char) -> Option<u8> {
    match c {
        'A'..='Z' => Some(c as u8 - b'A'),
        'a'..='z' => Some(c as u8 - b'a' + 26),
        _ => None,
    }
}

fn char_of(l: u8) -> char {
    if l < 26 {
        (b'A' + l) as char
    } else {
        (b'a' + l - 26) as char
    }
}

/// The subscripts of one side: letters and where an ellipsis stands.
#[derive(Default)]
struct Term {
    letters: Vec<u8>,
    ellipsis_at: Option<usize>,
}

fn parse_term(text: &str, offset: usize) -> Result<Term> {
    let mut term = Term::default();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '.' {
            let dots = chars[i..].iter().take_while(|&&d| d == '.').count();
            if dots < 3 || term.ellipsis_at.is_some() {
                return Err(einsum_err(if dots < 3 {
                    "found '.' for operand that is not part of any ellipsis".to_string()
                } else {
                    "found more than one ellipsis (\"...\") in an operand".to_string()
                }));
            }
            term.ellipsis_at = Some(term.letters.len());
            i += 3;
            continue;
        }
        if !c.is_whitespace() {
            let l = letter(c).ok_or_else(|| {
                einsum_err(format!(
                    "invalid subscript given at index {} in the equation string, subscripts must be in [a-zA-Z]",
                    offset + i
                ))
            })?;
            term.letters.push(l);
        }
        i += 1;
    }
    Ok(term)
}

impl Equation {
    /// Parses `equation` for operands of these shapes, with PyTorch's
    /// messages for what it rejects.
    pub fn new(equation: &str, shapes: &[&[i64]]) -> Result<Equation> {
        let (lhs, rhs) = match equation.find("->") {
            Some(k) => (&equation[..k], Some((&equation[k + 2..], k + 2))),
            None => (equation, None),
        };
        let mut terms = Vec::new();
        let mut offset = 0;
        for part in lhs.split(',') {
            terms.push(parse_term(part, offset)?);
            offset += part.len() + 1;
        }
        if terms.len() < shapes.len() {
            return Err(einsum_err(
                "more operands were provided than specified in the equation",
            ));
        }
        if terms.len() > shapes.len() {
            return Err(einsum_err(
                "fewer operands were provided than specified in the equation",
            ));
        }
        // How many dims each ellipsis stands for, and their broadcast count.
        let mut ell_dims = 0;
        let mut covered = Vec::new();
        for (k, (term, shape)) in terms.iter().zip(shapes).enumerate() {
            let n = term.letters.len();
            let c = match term.ellipsis_at {
                None if n != shape.len() => {
                    return Err(einsum_err(format!(
                        "the number of subscripts in the equation ({n}) does not match the number of dimensions ({}) for operand {k} and no ellipsis was given",
                        shape.len()
                    )));
                }
                None => 0,
                Some(_) if n > shape.len() => {
                    return Err(einsum_err(format!(
                        "the number of subscripts in the equation ({n}) is more than the number of dimensions ({}) for operand {k}",
                        shape.len()
                    )));
                }
                Some(_) => shape.len() - n,
            };
            ell_dims = ell_dims.max(c);
            covered.push(c);
        }
        let mut count = [0usize; 52];
        for term in &terms {
            for &l in &term.letters {
                count[l as usize] += 1;
            }
        }
        let mut dims: Vec<Label> = Vec::new();
        let ellipsis = (0..ell_dims).map(Label::Ellipsis);
        match rhs {
            None => {
                dims.extend(ellipsis);
                dims.extend(
                    (0..52u8)
                        .filter(|&l| count[l as usize] == 1)
                        .map(Label::Letter),
                );
            }
            Some((text, at)) => {
                let out = parse_term(text, at)?;
                let mut seen = [false; 52];
                for (i, &l) in out.letters.iter().enumerate() {
                    if out.ellipsis_at == Some(i) {
                        dims.extend(ellipsis.clone());
                    }
                    if count[l as usize] == 0 {
                        return Err(einsum_err(format!(
                            "output subscript {} does not appear in the equation for any input operand",
                            char_of(l)
                        )));
                    }
                    if std::mem::replace(&mut seen[l as usize], true) {
                        return Err(einsum_err(format!(
                            "output subscript {} appears more than once in the output",
                            char_of(l)
                        )));
                    }
                    dims.push(Label::Letter(l));
                }
                if out.ellipsis_at == Some(out.letters.len()) {
                    dims.extend(ellipsis.clone());
                }
            }
        }
        let out_dims = dims.len();
        for k in 0..ell_dims {
            if !dims.contains(&Label::Ellipsis(k)) {
                dims.push(Label::Ellipsis(k));
            }
        }
        for l in 0..52u8 {
            if count[l as usize] > 0 && !dims.contains(&Label::Letter(l)) {
                dims.push(Label::Letter(l));
            }
        }
        let mut sizes = vec![1i64; dims.len()];
        let mut positions = Vec::new();
        let mut diagonals = Vec::new();
        for (k, ((term, shape), &c)) in terms.iter().zip(shapes).zip(&covered).enumerate() {
            let mut labels: Vec<Label> = term.letters.iter().map(|&l| Label::Letter(l)).collect();
            if let Some(at) = term.ellipsis_at {
                // Right-aligned against the widest ellipsis.
                let ell = (ell_dims - c..ell_dims).map(Label::Ellipsis);
                labels.splice(at..at, ell);
            }
            let (steps, shape) = take_diagonals(k, &mut labels, shape)?;
            diagonals.push(steps);
            let mut at = Vec::new();
            for (label, &size) in labels.iter().zip(shape.iter()) {
                let p = dims
                    .iter()
                    .position(|d| d == label)
                    .expect("every label has a dim");
                if size != sizes[p] && size != 1 && sizes[p] != 1 {
                    return Err(einsum_err(match label {
                        Label::Letter(l) => format!(
                            "subscript {} has size {size} for operand {k} which does not broadcast with previously seen size {}",
                            char_of(*l),
                            sizes[p]
                        ),
                        Label::Ellipsis(_) => format!(
                            "operand {k}'s ellipsis dims of size {size} do not broadcast with previously seen size {}",
                            sizes[p]
                        ),
                    }));
                }
                if size != 1 {
                    sizes[p] = size;
                }
                at.push(p);
            }
            positions.push(at);
        }
        Ok(Equation {
            dims,
            out_dims,
            positions,
            sizes,
            diagonals,
        })
    }

    /// The output's shape.
    pub fn out_shape(&self) -> Vec<i64> {
        self.sizes[..self.out_dims].to_vec()
    }

    /// The last operand each lined-up dim appears in (`None`: none).
    pub fn last_operand(&self) -> Vec<Option<usize>> {
        (0..self.dims.len())
            .map(|d| self.positions.iter().rposition(|p| p.contains(&d)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn implicit_output_sorts_uppercase_first() {
        let e = Equation::new("bA,bc", &[&[2, 3], &[2, 4]]).unwrap();
        assert_eq!(e.out_shape(), vec![3, 4]);
        assert_eq!(e.dims[..2], [Label::Letter(0), Label::Letter(28)]);
    }

    #[test]
    fn ellipses_broadcast_right_aligned() {
        let e = Equation::new("...ij,...jk->...ik", &[&[2, 1, 3, 4], &[5, 4, 2]]).unwrap();
        assert_eq!(e.out_shape(), vec![2, 5, 3, 2]);
    }

    #[test]
    fn repeated_subscripts_take_diagonals() {
        let e = Equation::new("jii->ij", &[&[2, 3, 3]]).unwrap();
        assert_eq!(e.out_shape(), vec![3, 2]);
        assert_eq!(
            e.diagonals[0],
            vec![Diagonal {
                dims: vec![1, 2],
                size: 3
            }]
        );
        let e = Equation::new("iji->j", &[&[2, 3, 2]]).unwrap();
        assert_eq!(e.out_shape(), vec![3]);
        let e = Equation::new("ii", &[&[3, 3]]).unwrap();
        assert_eq!(e.out_shape(), Vec::<i64>::new());
    }

    #[test]
    fn pytorchs_messages() {
        let msg = |eq: &str, shapes: &[&[i64]]| {
            Equation::new(eq, shapes).unwrap_err().message().to_string()
        };
        assert_eq!(
            msg("ij,jk->ik", &[&[2, 3], &[4, 5]]),
            "einsum(): subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3"
        );
        assert_eq!(
            msg("ij,jk->ikz", &[&[2, 3], &[3, 5]]),
            "einsum(): output subscript z does not appear in the equation for any input operand"
        );
        assert_eq!(
            msg("ij", &[&[2, 3, 3]]),
            "einsum(): the number of subscripts in the equation (2) does not match the number of dimensions (3) for operand 0 and no ellipsis was given"
        );
        assert_eq!(
            msg("ii->i", &[&[3, 2]]),
            "einsum(): subscript i is repeated for operand 0 but the sizes don't match, 2 != 3"
        );
        assert_eq!(
            msg("ij,jk", &[&[2, 3], &[3, 4], &[2]]),
            "einsum(): more operands were provided than specified in the equation"
        );
    }
}
