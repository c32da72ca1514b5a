// retain-lib.mjs: the second module of retain.mjs; its build shares a
// name with retain.mjs's build but not a url.
export function build(kept, n) {
	for (let i = 0; i < n; i++)
		kept.push(new Array(512).fill(i));
}
