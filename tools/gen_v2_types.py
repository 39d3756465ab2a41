#!/usr/bin/env python3
"""Generates acp-schema/src/v2/{auth,capabilities,content,...}.rs from spec/crate-1.20.0/v2/schema.json.

Run from the repository root: `python3 tools/gen_v2_types.py acp-schema/src/v2 && cargo fmt --all`.
Without an argument it only reports what it would generate and which definitions are left to
acp-schema/src/v2/manual.rs.

1. It compares every v2 `$defs` entry with the v1 one (spec/crate-1.20.0/v1/schema.json),
   ignoring descriptions, titles, v2's x-scope/x-state annotations and value bounds, and
   counting a closed `oneOf` of string constants as the same as an open `anyOf` with a string
   fallback (and the same for tagged unions); a definition that is the same, transitively
   through every reference, is the v1 type (re-exported by v2/mod.rs), the others are generated.
2. Objects become structs (serde camelCase, the x-deserialize-* markers as in acp_schema::v1),
   open string enums `string_enum!`, tagged unions `tagged_union!`, objects carrying a tagged
   union a struct with a flattened `...Kind` union.
"""
import json, re, sys, os
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
v1=json.load(open('spec/crate-1.20.0/v1/schema.json'))['$defs']
v2=json.load(open('spec/crate-1.20.0/v2/schema.json'))['$defs']
IGN={'description','title','examples','x-scope','x-state','x-docs-ignore','minimum','maximum','minItems','minLength','maxLength'}
def isconst(b): return isinstance(b,dict) and set(b)=={'type','const'} and b['type']=='string'
def strip(x):
    if isinstance(x,dict):
        d={k:strip(v) for k,v in x.items() if k not in IGN}
        # open enum normalization
        for key in ('oneOf','anyOf'):
            br=d.get(key)
            if isinstance(br,list) and br:
                consts=[b for b in br if isconst(b)]
                rest=[b for b in br if not isconst(b)]
                if consts and (rest==[] or rest==[{'type':'string'}]):
                    del d[key]; d['openenum']=sorted(b['const'] for b in consts)
        for key in ('oneOf','anyOf'):
            br=d.get(key)
            if isinstance(br,list) and br:
                known=[b for b in br if 'not' not in b]
                fb=[b for b in br if 'not' in b]
                def tagof(b):
                    p=b.get('properties',{})
                    for k,v in p.items():
                        if isinstance(v,dict) and 'const' in v: return k,v['const']
                    return None
                tags=[tagof(b) for b in known]
                if known and all(tags) and len(fb)<=1:
                    out={}
                    for b,t in zip(known,tags):
                        bb={k:v for k,v in b.items() if k not in ('properties','required','type')}
                        out[t[1]]=bb
                    del d[key]; d.pop('discriminator',None); d['tagged']=(tags[0][0],out)
        return d
    if isinstance(x,list): return [strip(v) for v in x]
    return x
def refs(x,out):
    if isinstance(x,dict):
        for k,v in x.items():
            if k=='$ref': out.add(v.split('/')[-1])
            else: refs(v,out)
    elif isinstance(x,list):
        for v in x: refs(v,out)
    return out
local={k for k in v2 if k in v1 and strip(v1[k])==strip(v2[k])}
changed=True
while changed:
    changed=False
    for k in list(local):
        if any(r not in local for r in refs(v2[k],set())):
            local.discard(k);changed=True
shallow={k for k in v2 if k in v1 and strip(v1[k])==strip(v2[k])}
RAW = v2
REUSED = sorted(local)
KEEP_NULL = {("SessionInfoUpdate","title"),("SessionInfoUpdate","updatedAt"),("CompactionUpdate","summary"),
  ("CompactionUpdate","error"),("SubagentUpdate","title"),("SubagentUpdate","description"),("SubagentUpdate","capabilities"),
  ("SubagentUpdate","state"),("SubagentUpdate","cwd"),("SubagentUpdate","additionalDirectories"),
  ("SessionMessage","senderSessionId"),("SessionMessage","recipientSessionId"),("SessionMessage","senderMessageId"),
  ("SessionMessage","recipientMessageId"),("SessionMessage","content")}
MANUAL = {'RequestId','Error','ErrorCode','ErrorData','IdleStateUpdate','ElicitationFormMode','ElicitationUrlMode',
  'AgentRequest','ClientRequest','AgentResponse','ClientResponse','AgentNotification','ClientNotification','ProtocolLevelNotification',
  'EmbeddedResourceResource','SessionConfigSelectOptions','ElicitationContentValue','MultiSelectItems',
  'SetSessionConfigOptionRequest'}
KW = {'type':'type_','enum':'enum_values','ref':'ref_','mod':'mod_','move':'move_','loop':'loop_'}
def snake(s):
    s=re.sub(r'([a-z0-9])([A-Z])', r'\1_\2', s.lstrip('_')); return s.lower()
def camel(s):
    p=s.split('_'); return p[0]+''.join(x.capitalize() for x in p[1:])
def pascal(s):
    return ''.join(x[:1].upper()+x[1:] for x in re.split(r'[_/\-]', s) if x)
def refname(ps):
    if '$ref' in ps: return ps['$ref'].split('/')[-1]
    if 'allOf' in ps and len(ps['allOf'])==1 and '$ref' in ps['allOf'][0]: return ps['allOf'][0]['$ref'].split('/')[-1]
    return None
def rust_ty(ps):
    """(type, nullable)"""
    r=refname(ps)
    if r: return r, False
    if 'anyOf' in ps:
        br=ps['anyOf']; nn=[b for b in br if b.get('type')!='null']
        if len(nn)==1 and len(br)==2:
            t,_=rust_ty(nn[0]); return t, True
        return None, False
    t=ps.get('type'); nullable=False
    if isinstance(t,list):
        nullable='null' in t; t=[x for x in t if x!='null']; t=t[0] if len(t)==1 else None
    if t is None:
        if not {k for k in ps if not k.startswith('x-') and k not in ('description','title','default')}: return 'serde_json::Value', False
        return None, False
    if t=='string': return 'String', nullable
    if t=='boolean': return 'bool', nullable
    if t=='number': return 'f64', nullable
    if t=='integer':
        return {'uint16':'u16','uint32':'u32','uint64':'u64','int64':'i64','int32':'i32'}[ps.get('format','int64')], nullable
    if t=='array':
        it,_=rust_ty(ps['items']);
        return (f'Vec<{it}>' if it else None), nullable
    if t=='object':
        ap=ps.get('additionalProperties')
        if ap is True: return 'Meta', nullable
        if isinstance(ap,dict):
            it,_=rust_ty(ap); return f'BTreeMap<String, {it}>', nullable
    return None, False
def is_obj(name):
    return name in RAW and RAW[name].get('type')=='object'
def doc(d, fallback):
    # Our own one-line docs, never the schema's prose: the schema is data (read its
    # descriptions in spec/), the doc comments say which wire name a Rust item stands for.
    return fallback
def field(defn, prop, ps, required):
    rt, nullable = rust_ty(ps)
    if rt is None: raise Exception(f'MANUAL field {defn}.{prop}: {json.dumps(ps)[:200]}')
    fname = 'meta' if prop=='_meta' else KW.get(snake(prop), snake(prop))
    attrs=[]
    if prop=='_meta' or camel(fname)!=prop: attrs.append(f'rename = "{prop}"')
    lenient = ps.get('x-deserialize-default-on-error', False)
    skip_items = ps.get('x-deserialize-skip-invalid-items', False)
    on_null = ps.get('x-deserialize-default-on-null', False)
    r = refname(ps) or (refname(ps['anyOf'][0]) if 'anyOf' in ps and ps['anyOf'] and isinstance(ps['anyOf'][0],dict) else None)
    capobj = r is not None and r.endswith('Capabilities') and is_obj(r)
    if (defn,prop) in KEEP_NULL:
        ty=f'Option<Option<{rt}>>'
        de = 'lenient_nullable_items' if skip_items else 'lenient_nullable'
        attrs += ['default','skip_serializing_if = "Option::is_none"', f'deserialize_with = "{de}"']
    elif required:
        ty=rt
        if on_null: attrs += [f'deserialize_with = "null_as_default"']
        if skip_items and not lenient:
            attrs += ['deserialize_with = "skip_invalid_items"']
    elif 'default' in ps:
        ty=rt
        if lenient: attrs += ['default', 'deserialize_with = "%s"' % ('lenient_object_default' if capobj else ('lenient_items' if skip_items else 'lenient_default'))]
        else: attrs += ['default']
    else:
        ty=f'Option<{rt}>'
        attrs += ['default','skip_serializing_if = "Option::is_none"']
        if lenient:
            if skip_items: attrs.append('deserialize_with = "lenient_vec"')
            elif capobj: attrs.append('deserialize_with = "lenient_object"')
            else: attrs.append('deserialize_with = "lenient"')
        elif skip_items: attrs.append('deserialize_with = "lenient_vec"')
    fdoc = 'Extension metadata.' if prop=='_meta' else doc(ps, f'The `{prop}` field ({"required" if required else "optional"}).')
    out=f'    /// {fdoc}\n'
    if attrs: out+=f'    #[serde({", ".join(attrs)})]\n'
    out+=f'    pub {fname}: {ty},\n'
    return out, fname, ty, required and not on_null
def gen_struct(name, d, extra_field=None):
    req=set(d.get('required',[]))
    body=''; params=[]; inits=[]
    for p,ps in d.get('properties',{}).items():
        f,fname,ty,isreq=field(name,p,ps,p in req)
        body+=f
        if p in req and (name,p) not in KEEP_NULL:
            params.append((fname, ty)); inits.append(f'{fname}: {fname}.into()')
        elif ty.startswith('Option<'):
            inits.append(f'{fname}: None')
        else:
            inits.append(f'{fname}: Default::default()')
    if extra_field:
        body+=extra_field
        params.append(('kind', name+'Kind')); inits.append('kind')
    derive='Debug, Clone, PartialEq, Serialize, Deserialize'
    if all(p not in req for p in d.get('properties',{})) and not extra_field: derive='Debug, Clone, PartialEq, Default, Serialize, Deserialize'
    out=f'/// {doc(d, "The v2 `"+name+"` definition.")}\n#[derive({derive})]\n#[serde(rename_all = "camelCase")]\npub struct {name} {{\n{body}}}\n'
    if params:
        # A constructor of the required fields (the optional ones absent, or their default):
        # what a program that builds the message writes, instead of JSON to decode.
        args=', '.join(f'{n}: impl Into<{t}>' if n!='kind' else f'{n}: {t}' for n,t in params)
        names=', '.join(f'`{n}`' for n,_ in params)
        out+=(f'\nimpl {name} {{\n    /// A `{name}` of its required fields ({names}); the optional ones are absent.\n'
              f'    pub fn new({args}) -> Self {{\n        {name} {{ {", ".join(inits)} }}\n    }}\n}}\n')
    return out
def isconst(b): return isinstance(b,dict) and set(b)-{'description','title'}=={'type','const'} and b['type']=='string'
def gen_enum(name, d):
    br=d.get('anyOf') or d.get('oneOf')
    consts=[b for b in br if isconst(b)]
    if not consts or len(consts)<len(br)-1: return None
    v=''.join(f'        /// {doc(b, "`"+b["const"]+"`.")}\n        {pascal(b["const"])} = "{b["const"]}",\n' for b in consts)
    return f'string_enum! {{\n    /// {doc(d, "The v2 `"+name+"` values.")}\n    pub enum {name} {{\n{v}    }}\n}}\n'
def tagged(d):
    br=d.get('anyOf') or d.get('oneOf')
    if not br: return None
    known=[b for b in br if 'not' not in b]; fb=[b for b in br if 'not' in b]
    tags=[]
    for b in known:
        t=None
        for k,v in b.get('properties',{}).items():
            if isinstance(v,dict) and 'const' in v: t=(k,v['const'])
        if not t: return None
        tags.append((t,b))
    keys={t[0] for t,_ in tags}
    if len(keys)!=1 or len(fb)>1: return None
    return keys.pop(), [(t[1], b) for t,b in tags]
def gen_union(name, d, uname=None):
    t=tagged(d)
    if not t: return None
    key,vs=t; uname=uname or name
    body=''
    for tag,b in vs:
        r=refname(b) or (refname(b['allOf'][0]) if b.get('allOf') else None)
        props={k for k in b.get('properties',{}) if k!=key}
        if props: raise Exception(f'MANUAL union branch {name}.{tag} props {props}')
        body+=f'        /// {doc(b, "`"+tag+"`.")}\n'
        vn=pascal(tag)+('State' if tag=='unknown' else '')
        body+=f'        {vn}({r}) = "{tag}",\n' if r else f'        {vn} = "{tag}",\n'
    return f'tagged_union! {{\n    /// {doc(d, "The v2 `"+name+"` union.")}\n    pub enum {uname}, tag = "{key}", expecting = "a {name} object" {{\n{body}    }}\n}}\n'
def gen(name):
    d=RAW[name]
    if name in MANUAL: return None
    if d.get('type')=='object' and (d.get('anyOf') or d.get('oneOf')):
        t=tagged(d)
        if not t: raise Exception(f'MANUAL object+union {name}')
        u=gen_union(name, d, name+'Kind')
        extra=f'    /// The variant, discriminated by `{t[0]}`.\n    #[serde(flatten)]\n    pub kind: {name}Kind,\n'
        return gen_struct(name, d, extra) + '\n' + u
    if d.get('type')=='object': return gen_struct(name,d)
    if d.get('type')=='string' and 'enum' not in d:
        return (f'/// {doc(d, "The v2 `"+name+"` string.")}\n#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]\n#[serde(transparent)]\npub struct {name}(pub String);\n'
                f'\nimpl From<String> for {name} {{\n    fn from(s: String) -> Self {{\n        {name}(s)\n    }}\n}}\n'
                f'\nimpl From<&str> for {name} {{\n    fn from(s: &str) -> Self {{\n        {name}(s.to_owned())\n    }}\n}}\n')
    if 'anyOf' in d or 'oneOf' in d:
        e=gen_enum(name,d)
        if e: return e
        u=gen_union(name,d)
        if u: return u
    raise Exception(f'MANUAL {name}: {json.dumps(strip(d))[:200]}')
if __name__=='__main__':
    out={}; manual=[]
    for name in RAW:
        if name in local: continue
        try:
            g=gen(name)
            if g is None: manual.append(name)
            else: out[name]=g
        except Exception as e:
            manual.append(name); print(e, file=sys.stderr)
    print('generated',len(out),'manual',manual, file=sys.stderr)

MODULES = [
  ('content', ['Content','Text','Image','Audio','Resource','Annotation','Icon','MediaType','Blob','Embedded']),
  ('diff', ['Diff','AbsolutePath']),
  ('tool_call', ['ToolCall','ToolKind','Permission']),
  ('elicitation', ['Elicitation','MultiSelect','PropertySchema','StringFormat','EnumOption']),
  ('terminal', ['Terminal']),
  ('plan', ['Plan']),
  ('capabilities', ['Capabilities']),
  ('auth', ['Auth','Login','Logout']),
  ('state', ['State','Background','StopReason']),
  ('updates', ['Update','Message','Agent','Thought','Replay','Compaction','Command','Notice','Usage','Cost','Chunk']),
  ('session', ['Session','Initialize','Prompt','Mcp','Http','Env','SystemPrompt','Implementation','Idempotency','Cancel','Protocol','Error','Config']),
]
def module_of(name):
    for m,keys in MODULES:
        if any(k in name for k in keys): return m
    return 'session'
HEADER = '''//! {title}
//!
//! Generated from `spec/crate-1.20.0/v2/schema.json` by `tools/gen_v2_types.py` (one type per
//! `$defs` entry that differs from v1 on the wire); the doc comments name the
//! wire items; the schema's descriptions (in `spec/`) say what they mean.
//! Edit the generator, not this file, unless the type is hand-written in `manual.rs`.

#![allow(clippy::large_enum_variant)]

'''
# The helpers a module may use, by where they live: only those its code names are imported.
HELPERS = [
  ('crate::v1::serde_ext', ['lenient_nullable', 'lenient_nullable_items', 'lenient_object', 'lenient_object_default', 'null_as_default']),
  ('crate::v1::serde_util', ['lenient', 'lenient_default', 'lenient_items', 'lenient_vec', 'string_enum', 'tagged_union']),
  ('super::manual', ['skip_invalid_items']),
]
def uses(body):
    """The `use` lines of a module whose code is `body`: what it names, nothing more."""
    def named(n):
        return f'"{n}"' in body or re.search(r'\b'+n+r'! \{', body) is not None
    lines=['use serde::{Deserialize, Serialize};', '']
    if re.search(r'\bBTreeMap<', body): lines += ['use std::collections::BTreeMap;', '']
    lines.append('use super::*;')
    for path,names in HELPERS:
        got=[n for n in names if named(n)]
        if len(got)==1: lines.append(f'use {path}::{got[0]};')
        elif got: lines.append(f'use {path}::{{{", ".join(got)}}};')
    return '\n'.join(lines)+'\n'
TITLES = {'content':'v2 content blocks and resources.','diff':'v2 structured diffs.','tool_call':'v2 tool calls and permission requests.',
 'elicitation':'v2 elicitation requests and their form schemas.','terminal':'v2 terminals (agent-owned, reported by updates).',
 'plan':'v2 plans.','capabilities':'v2 capability objects.','auth':'v2 authentication (`auth/login`, `auth/logout`).',
 'state':'v2 session state updates (the end of a turn is an `idle` state update).','updates':'v2 session updates (upserts keyed by id).',
 'session':'v2 session lifecycle, initialization and errors.'}
def emit(out, dest):
    by={}
    for name,code in out.items(): by.setdefault(module_of(name),[]).append(code)
    for m,codes in by.items():
        with open(os.path.join(dest, m+'.rs'),'w') as f:
            body='\n'.join(codes)
            f.write(HEADER.format(title=TITLES[m])+uses(body)+'\n'+body)
    return sorted(by)
if __name__=='__main__' and len(sys.argv)>1:
    print(emit(out, sys.argv[1]))
