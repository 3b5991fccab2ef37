// Execution test (SPIR-V and WGSL): drawn with a vertex buffer laid out by the reflection alone
// (stride, and per input its location, format and offset), into an rgba8unorm target.
cbuffer Tint
{
    float4 Add;
};

struct VSIn
{
    float2 Position : POSITION;
    float Scale : PSIZE0;
    float4 Color : COLOR0;
    uint Tag : TAG0;
    int2 Shift : TEXCOORD1;
};

struct VSOut
{
    float4 Position : SV_Position;
    float4 Color : COLOR0;
    nointerpolation uint Tag : TAG0;
};

[shader("vertex")]
VSOut VSMain(VSIn v)
{
    VSOut o;
    o.Position = float4(v.Position + float2(v.Shift) * 0.0, 0.0, 1.0);
    o.Color = float4(v.Color.rgb * v.Scale, v.Color.a);
    o.Tag = v.Tag + uint(v.Shift.x + v.Shift.y);
    return o;
}

[shader("pixel")]
float4 PSMain(VSOut i) : SV_Target
{
    float blue = (i.Tag == 7u) ? 0.5 : 0.0;
    return float4(i.Color.rg, i.Color.b + blue, i.Color.a) + Add;
}
