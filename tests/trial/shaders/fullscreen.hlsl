// Full-screen triangle from SV_VertexID: no vertex buffer; a vertical gradient.
cbuffer Gradient : register(b0)
{
    float4 Top;
    float4 Bottom;
};

struct VSOut
{
    float4 Position : SV_Position;
    float2 UV : TEXCOORD0;
};

[shader("vertex")]
VSOut VSMain(uint id : SV_VertexID)
{
    VSOut o;
    o.UV = float2((id << 1) & 2, id & 2);
    o.Position = float4(o.UV * float2(2.0, -2.0) + float2(-1.0, 1.0), 0.0, 1.0);
    return o;
}

[shader("pixel")]
float4 PSMain(VSOut i) : SV_Target0
{
    return lerp(Top, Bottom, i.UV.y);
}
