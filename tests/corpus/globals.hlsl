// HLSL written for DXC: loose global uniforms, which DXC gathers into one constant buffer named
// $Globals (created at the first of them, bound in declaration order with the other unannotated
// resources). oneshader reflects it as the resource "$Globals" on every target.
Texture2D Sprite : register(t0);
float4x4 WorldViewProj;
SamplerState Linear;
float4 Tint;
float Time;
uniform float2 Scroll;

struct VsIn
{
    float3 Position : POSITION;
    float2 Uv : TEXCOORD0;
};

struct VsOut
{
    float4 Position : SV_Position;
    float2 Uv : TEXCOORD0;
};

[shader("vertex")]
VsOut VsMain(VsIn v)
{
    VsOut o;
    o.Position = mul(WorldViewProj, float4(v.Position, 1.0));
    o.Uv = v.Uv + Scroll * Time;
    return o;
}

[shader("pixel")]
float4 PsMain(VsOut i) : SV_Target
{
    return Sprite.Sample(Linear, i.Uv) * Tint;
}
