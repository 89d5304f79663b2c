/* grade_params.c - rubric parameters of `qptrace grade`: the [params]
 * values, ${...} in rubric values, and the small expression language of
 * derived counts (rubrics/README.md, "Parameters")
 *
 *   expr    := sum (('<' | '<=' | '>' | '>=' | '==' | '!=') sum)?   1 or 0
 *   sum     := term (('+' | '-') term)*
 *   term    := unary (('*' | '/' | '%') unary)*
 *   unary   := ('-' | '+') unary | primary
 *   primary := NUMBER | NAME | '${' expr '}' | '(' expr ')'
 *            | FUNC '(' expr (',' expr)* ')'      ceil floor min max
 *
 * Values are exact fractions of 64-bit integers (so ceil(size/mtu) rounds
 * the true quotient), every operation is checked for overflow, the nesting
 * depth and the length are bounded, and a result that is not a whole
 * number is an error that says to use ceil() or floor().
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "grade.h"

#define EXPR_MAX_LEN 1000
#define EXPR_MAX_DEPTH 32

struct grade_param *grade_param_find(const struct grade_params *ps, const char *name)
{
	for (guint i = 0; ps->list && i < ps->list->len; i++) {
		struct grade_param *p = g_ptr_array_index(ps->list, i);

		if (!strcmp(p->name, name))
			return p;
	}
	return NULL;
}

static void param_free(gpointer v)
{
	struct grade_param *p = v;

	g_free(p->name);
	g_free(p->value);
	g_free(p->from);
	g_free(p);
}

void grade_params_init(struct grade_params *ps)
{
	ps->list = g_ptr_array_new_with_free_func(param_free);
}

void grade_params_clear(struct grade_params *ps)
{
	if (ps->list)
		g_ptr_array_free(ps->list, TRUE);
	ps->list = NULL;
}

struct grade_param *grade_param_add(struct grade_params *ps, const char *name,
				    const char *value, const char *from)
{
	struct grade_param *p = g_new0(struct grade_param, 1);

	p->name = g_strdup(name);
	p->value = g_strdup(value);
	p->from = g_strdup(from);
	g_ptr_array_add(ps->list, p);
	return p;
}

void grade_param_assign(struct grade_param *p, const char *value, const char *from)
{
	g_free(p->value);
	g_free(p->from);
	p->value = g_strdup(value);
	p->from = g_strdup(from);
}

bool grade_name_ok(const char *s)
{
	if (!s || !(g_ascii_isalpha(*s) || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!g_ascii_isalnum(*s) && *s != '_')
			return false;
	return true;
}

/* A parameter value: a whole number or a word (letters, digits, _ . -),
 * never an expression, so that putting it into an expression cannot
 * change the expression's meaning. */
bool grade_value_ok(const char *s)
{
	if (!s || !*s || strlen(s) > 64)
		return false;
	for (const char *p = s; *p; p++)
		if (!g_ascii_isalnum(*p) && *p != '_' && *p != '.' && *p != '-')
			return false;
	return true;
}

/* ---- the evaluator -------------------------------------------------------- */

struct frac {
	int64_t n, d; /* d > 0, reduced */
};

struct ev {
	const char *s, *p;
	const struct grade_params *ps;
	GString *err; /* set on the first error */
	int depth;
};

static int64_t gcd64(int64_t a, int64_t b)
{
	if (a < 0)
		a = -a;
	if (b < 0)
		b = -b;
	while (b) {
		int64_t t = a % b;

		a = b;
		b = t;
	}
	return a ? a : 1;
}

static bool fail(struct ev *e, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static bool fail(struct ev *e, const char *fmt, ...)
{
	va_list ap;

	if (e->err->len)
		return false;
	va_start(ap, fmt);
	g_string_append_vprintf(e->err, fmt, ap);
	va_end(ap);
	return false;
}

static bool mk(struct ev *e, int64_t n, int64_t d, struct frac *out)
{
	int64_t g;

	if (d == 0)
		return fail(e, "division by zero");
	if (n == INT64_MIN || d == INT64_MIN)
		return fail(e, "number out of range");
	if (d < 0) {
		n = -n;
		d = -d;
	}
	g = gcd64(n, d);
	out->n = n / g;
	out->d = d / g;
	return true;
}

static bool f_add(struct ev *e, struct frac a, struct frac b, int sign, struct frac *out)
{
	int64_t x, y, n, d;

	if (__builtin_mul_overflow(a.n, b.d, &x) || __builtin_mul_overflow(b.n, a.d, &y) ||
	    __builtin_mul_overflow(a.d, b.d, &d) ||
	    (sign > 0 ? __builtin_add_overflow(x, y, &n) : __builtin_sub_overflow(x, y, &n)))
		return fail(e, "number out of range");
	return mk(e, n, d, out);
}

static bool f_mul(struct ev *e, struct frac a, struct frac b, struct frac *out)
{
	int64_t n, d;

	if (__builtin_mul_overflow(a.n, b.n, &n) || __builtin_mul_overflow(a.d, b.d, &d))
		return fail(e, "number out of range");
	return mk(e, n, d, out);
}

static bool f_div(struct ev *e, struct frac a, struct frac b, struct frac *out)
{
	int64_t n, d;

	if (b.n == 0)
		return fail(e, "division by zero");
	if (__builtin_mul_overflow(a.n, b.d, &n) || __builtin_mul_overflow(a.d, b.n, &d))
		return fail(e, "number out of range");
	return mk(e, n, d, out);
}

static int64_t f_floor(struct frac a)
{
	int64_t q = a.n / a.d;

	return (a.n % a.d != 0 && a.n < 0) ? q - 1 : q;
}

static void skip_ws(struct ev *e)
{
	while (*e->p == ' ' || *e->p == '\t')
		e->p++;
}

static bool parse_expr(struct ev *e, struct frac *out);

static bool lookup(struct ev *e, const char *name, struct frac *out)
{
	const struct grade_param *p = e->ps ? grade_param_find(e->ps, name) : NULL;
	gint64 v;

	if (!p) {
		GString *known = g_string_new("");

		for (guint i = 0; e->ps && e->ps->list && i < e->ps->list->len; i++)
			g_string_append_printf(known, "%s%s", i ? ", " : "",
					       ((struct grade_param *)g_ptr_array_index(e->ps->list, i))->name);
		fail(e, "no parameter '%s' (%s%s)", name, known->len ? "known: " : "the rubric has no [params]",
		     known->str);
		g_string_free(known, TRUE);
		return false;
	}
	if (!g_ascii_string_to_signed(p->value, 10, -(G_GINT64_CONSTANT(1) << 53),
				      G_GINT64_CONSTANT(1) << 53, &v, NULL))
		return fail(e, "parameter '%s' is '%s', not a whole number", name, p->value);
	out->n = v;
	out->d = 1;
	return true;
}

static bool parse_name(struct ev *e, char *buf, size_t n)
{
	size_t k = 0;

	if (!(g_ascii_isalpha(*e->p) || *e->p == '_'))
		return false;
	while (g_ascii_isalnum(*e->p) || *e->p == '_') {
		if (k + 1 >= n)
			return fail(e, "name too long");
		buf[k++] = *e->p++;
	}
	buf[k] = '\0';
	return true;
}

static bool parse_primary(struct ev *e, struct frac *out)
{
	char name[65];

	skip_ws(e);
	if (g_ascii_isdigit(*e->p)) {
		int64_t v = 0;

		while (g_ascii_isdigit(*e->p)) {
			if (__builtin_mul_overflow(v, 10, &v) ||
			    __builtin_add_overflow(v, *e->p - '0', &v))
				return fail(e, "number out of range");
			e->p++;
		}
		out->n = v;
		out->d = 1;
		return true;
	}
	if (*e->p == '(') {
		e->p++;
		if (!parse_expr(e, out))
			return false;
		skip_ws(e);
		if (*e->p != ')')
			return fail(e, "')' expected at '%s'", *e->p ? e->p : "the end");
		e->p++;
		return true;
	}
	if (e->p[0] == '$' && e->p[1] == '{') {
		/* ${NAME} or ${EXPR}, as in text values */
		e->p += 2;
		if (!parse_expr(e, out))
			return false;
		skip_ws(e);
		if (*e->p != '}')
			return fail(e, "'}' expected at '%s'", *e->p ? e->p : "the end");
		e->p++;
		return true;
	}
	if (parse_name(e, name, sizeof name)) {
		static const char *const fns[] = { "ceil", "floor", "min", "max" };
		struct frac a, b;
		int fn = -1;

		skip_ws(e);
		if (*e->p != '(')
			return lookup(e, name, out);
		for (int i = 0; i < 4; i++)
			if (!strcmp(name, fns[i]))
				fn = i;
		if (fn < 0)
			return fail(e, "unknown function '%s' (known: ceil, floor, min, max)", name);
		e->p++;
		if (!parse_expr(e, &a))
			return false;
		skip_ws(e);
		if (fn >= 2) {
			if (*e->p != ',')
				return fail(e, "%s() takes two arguments: %s(a, b)", name, name);
			e->p++;
			if (!parse_expr(e, &b))
				return false;
			skip_ws(e);
		}
		if (*e->p != ')')
			return fail(e, "')' expected after the argument%s of %s()", fn >= 2 ? "s" : "", name);
		e->p++;
		switch (fn) {
		case 0: /* ceil */
			out->n = -f_floor((struct frac){ -a.n, a.d });
			out->d = 1;
			break;
		case 1:
			out->n = f_floor(a);
			out->d = 1;
			break;
		default: {
			/* compare a.n/a.d with b.n/b.d: a.n*b.d vs b.n*a.d */
			int64_t x, y;

			if (__builtin_mul_overflow(a.n, b.d, &x) || __builtin_mul_overflow(b.n, a.d, &y))
				return fail(e, "number out of range");
			*out = (fn == 2) == (x < y) ? a : b;
		}
		}
		return true;
	}
	if (!*e->p)
		return fail(e, "a number or a parameter expected at the end");
	return fail(e, "unexpected '%c'", *e->p);
}

static bool parse_unary(struct ev *e, struct frac *out)
{
	bool ok;

	skip_ws(e);
	if (*e->p != '-' && *e->p != '+')
		return parse_primary(e, out);
	if (++e->depth > EXPR_MAX_DEPTH)
		return fail(e, "nested too deeply");
	if (*e->p++ == '-') {
		ok = parse_unary(e, out);
		out->n = -out->n;
	} else {
		ok = parse_unary(e, out);
	}
	e->depth--;
	return ok;
}

static bool parse_term(struct ev *e, struct frac *out)
{
	if (!parse_unary(e, out))
		return false;
	for (;;) {
		struct frac b;
		char op;

		skip_ws(e);
		op = *e->p;
		if (op != '*' && op != '/' && op != '%')
			return true;
		e->p++;
		if (!parse_unary(e, &b))
			return false;
		if (op == '*') {
			if (!f_mul(e, *out, b, out))
				return false;
		} else if (op == '/') {
			if (!f_div(e, *out, b, out))
				return false;
		} else {
			if (out->d != 1 || b.d != 1)
				return fail(e, "%% takes whole numbers");
			if (b.n == 0)
				return fail(e, "division by zero");
			out->n %= b.n;
		}
	}
}

static bool parse_sum(struct ev *e, struct frac *out)
{
	if (++e->depth > EXPR_MAX_DEPTH)
		return fail(e, "nested too deeply");
	if (!parse_term(e, out))
		return false;
	for (;;) {
		struct frac b;
		char op;

		skip_ws(e);
		op = *e->p;
		if (op != '+' && op != '-')
			break;
		e->p++;
		if (!parse_term(e, &b) || !f_add(e, *out, b, op == '+' ? 1 : -1, out))
			return false;
	}
	e->depth--;
	return true;
}

static bool parse_expr(struct ev *e, struct frac *out)
{
	static const char *const ops[] = { "<=", ">=", "==", "!=", "<", ">" };
	struct frac b;
	int64_t x, y;
	int op = -1;

	if (!parse_sum(e, out))
		return false;
	skip_ws(e);
	for (int i = 0; i < 6 && op < 0; i++)
		if (!strncmp(e->p, ops[i], strlen(ops[i])))
			op = i;
	if (op < 0)
		return true;
	e->p += strlen(ops[op]);
	if (!parse_sum(e, &b))
		return false;
	if (__builtin_mul_overflow(out->n, b.d, &x) || __builtin_mul_overflow(b.n, out->d, &y))
		return fail(e, "number out of range");
	switch (op) {
	case 0: out->n = x <= y; break;
	case 1: out->n = x >= y; break;
	case 2: out->n = x == y; break;
	case 3: out->n = x != y; break;
	case 4: out->n = x < y; break;
	default: out->n = x > y; break;
	}
	out->d = 1;
	return true;
}

bool grade_eval(const char *expr, const struct grade_params *ps, int64_t *out, GString *err)
{
	struct ev e = { .s = expr, .p = expr, .ps = ps, .err = g_string_new("") };
	struct frac v = { 0, 1 };
	bool ok;

	if (strlen(expr) > EXPR_MAX_LEN) {
		g_string_append_printf(err, "expression longer than %d characters", EXPR_MAX_LEN);
		g_string_free(e.err, TRUE);
		return false;
	}
	ok = parse_expr(&e, &v);
	skip_ws(&e);
	if (ok && *e.p)
		ok = fail(&e, "unexpected '%s'", e.p);
	if (ok && v.d != 1)
		ok = fail(&e, "%" PRId64 "/%" PRId64 " is not a whole number (round it with ceil() or floor())",
			  v.n, v.d);
	if (ok)
		*out = v.n;
	else
		g_string_append(err, e.err->str);
	g_string_free(e.err, TRUE);
	return ok;
}

/* ${NAME} becomes the parameter's value, ${EXPR} the value of EXPR. */
char *grade_subst(const char *text, const struct grade_params *ps, GString *err)
{
	GString *o = g_string_new("");
	const char *p = text;

	while (*p) {
		const char *end;
		char *inner;

		if (p[0] != '$' || p[1] != '{') {
			g_string_append_c(o, *p++);
			continue;
		}
		end = strchr(p + 2, '}');
		if (!end) {
			g_string_append_printf(err, "'${' without a closing '}'");
			g_string_free(o, TRUE);
			return NULL;
		}
		inner = g_strndup(p + 2, (gsize)(end - p - 2));
		g_strstrip(inner);
		if (grade_name_ok(inner)) {
			const struct grade_param *prm = ps ? grade_param_find(ps, inner) : NULL;

			if (!prm) {
				struct ev e = { .ps = ps, .err = err };
				struct frac dummy;

				lookup(&e, inner, &dummy); /* its message */
				g_free(inner);
				g_string_free(o, TRUE);
				return NULL;
			}
			g_string_append(o, prm->value);
		} else {
			int64_t v;

			if (!grade_eval(inner, ps, &v, err)) {
				g_string_prepend(err, "}: ");
				g_string_prepend(err, inner);
				g_string_prepend(err, "${");
				g_free(inner);
				g_string_free(o, TRUE);
				return NULL;
			}
			g_string_append_printf(o, "%" PRId64, v);
		}
		g_free(inner);
		p = end + 1;
	}
	return g_string_free(o, FALSE);
}
